"""What the job controller's sync does for a TFJob only: v0.5.3's own counter of deleted jobs
(D82). Its sync for every kind, v0.5.3's TestNormalPath rows with their PS replicas included,
and what a deleted job drops, are tested in ``unit/common/jobcontroller/test_jobcontroller.py``."""

from tf_operator.controller.v1.tensorflow import metrics


def test_a_deleted_tfjob_is_counted_once_under_v0_5_3s_name_too(harness, tfu):
    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.sync(job)
    harness.tfjob_informer.get_indexer().delete(job)
    before = metrics.JOBS_DELETED.get()
    assert harness.sync(job) is True
    harness.sync(job)
    assert metrics.JOBS_DELETED.get() == before + 1
