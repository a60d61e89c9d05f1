"""The dashboard in a real browser: Debian's chromium driven by Playwright.

The real ``tf-operator-dashboard`` process serves the local cluster (with the real operator
running the jobs, TFJobs and PyTorchJobs); chromium runs headless with a fresh profile and every
network feature that would reach outside this machine turned off. Screenshots land in
``build/screenshots/``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcluster.testing import wait_for
from test.integration.tools.conftest import ROOT, create_namespace, python_job, unique
from tf_operator.sdk import NotFound, PyTorchJobClient, TFJobClient

pytestmark = pytest.mark.integration

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = ROOT / "build" / "screenshots"
TIMEOUT_MS = 30_000
NAMESPACE = "dashboard-test"

if not CHROMIUM.exists():
    # `make test` installs it whenever it can (root with apt): there, a missing browser is an error.
    if os.geteuid() == 0 and shutil.which("apt-get"):
        pytest.fail("Debian's chromium is missing: run hack/ensure-chromium.sh", pytrace=False)
    pytest.skip(
        "Debian's chromium is not installed (hack/ensure-chromium.sh)", allow_module_level=True
    )
playwright_sync = pytest.importorskip("playwright.sync_api")
expect = playwright_sync.expect


class Dashboard:
    """A ``tf-operator-dashboard`` process; ``url`` once it listens."""

    def __init__(self, kubeconfig: str, *args: str) -> None:
        self.proc = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "tf-operator-dashboard"),
                f"--kubeconfig={kubeconfig}",
                f"--namespace={NAMESPACE}",
                "--port=0",
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "KUBECONFIG"},
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # blocks until it listens (or exits)
        assert "serving on http://" in line, line + self.proc.stdout.read()
        # reached through loopback whatever it binds (chromium refuses 0.0.0.0)
        self.url = line.split()[3].rstrip("/").replace("://0.0.0.0:", "://127.0.0.1:")
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])
        self.lines: list[str] = []

    def read_line(self, containing: str) -> str:
        """The next line of its output that contains ``containing`` (warnings, sign-in URL)."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, f"exited without printing {containing!r}: {self.lines}"
            self.lines.append(line)
            if containing in line:
                return line.strip()

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


@pytest.fixture(scope="module")
def namespace(cluster) -> str:
    create_namespace(cluster, NAMESPACE)
    return NAMESPACE


@pytest.fixture(scope="module")
def dashboard(cluster, operator, namespace) -> Iterator[Dashboard]:
    dash = Dashboard(cluster.kubeconfig, "--allow-write")
    yield dash
    dash.stop()


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory):
    profile = tmp_path_factory.mktemp("chromium-profile")
    with playwright_sync.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(TIMEOUT_MS)
        yield context
        context.close()


@pytest.fixture
def page(browser_context):
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    yield page
    page.close()
    assert not errors, f"JavaScript errors: {errors}"


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def gated_job(name: str, marker: Path, workers: int = 1) -> dict:
    """Workers print a line, then wait for ``marker`` to exist before exiting 0."""
    code = (
        "import json,os,time\n"
        "t = json.loads(os.environ['TF_CONFIG'])['task']\n"
        "print('hello from', t['type'], t['index'], flush=True)\n"
        f"while not os.path.exists({str(marker)!r}): time.sleep(0.05)\n"
        "print('bye from', t['type'], t['index'])\n"
    )
    job = python_job(name, code, workers=workers, clean_pod_policy="None")
    job["metadata"]["namespace"] = NAMESPACE
    return job


def test_list_updates_live_when_a_job_changes_phase(dashboard, client, page, tmp_path):
    name = unique("live")
    marker = tmp_path / "go"
    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}")
    expect(page.locator("#live")).to_have_text("live")
    page.evaluate("window.notReloaded = true")

    client.create(gated_job(name, marker))
    row = page.locator(f'#jobs tr[data-name="{name}"]')
    expect(row.locator(".state")).to_have_text("Running")
    marker.touch()
    expect(row.locator(".state")).to_have_text("Succeeded")
    expect(row.locator(".kind")).to_have_text("TFJob")
    expect(row.locator("td").nth(5)).to_have_text("1")  # succeeded replicas
    assert page.evaluate("window.notReloaded") is True  # pushed, not reloaded
    screenshot(page, "jobs-list")


def test_job_page_shows_replicas_conditions_and_logs(dashboard, client, page, tmp_path):
    name = unique("page")
    marker = tmp_path / "go"
    client.create(gated_job(name, marker, workers=2))
    client.wait_for_job(name, NAMESPACE, conditions=["Running"], timeout=60)
    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}/tfjobs/{name}")

    replicas = page.locator("#replicas tbody tr")
    expect(replicas).to_have_count(2)
    for i in (0, 1):
        row = page.locator(f'#replicas tr[data-pod="{name}-worker-{i}"]')
        expect(row.locator(".phase")).to_have_text("Running")
        expect(page.locator(f'pre[data-pod="{name}-worker-{i}"]')).to_contain_text(
            f"hello from worker {i}"
        )
    marker.touch()  # the log keeps streaming and the page follows the job to its end
    expect(page.locator(f'pre[data-pod="{name}-worker-0"]')).to_contain_text("bye from worker 0")
    expect(page.locator("#state .state")).to_have_text("Succeeded")
    expect(page.locator("#conditions li.current strong")).to_contain_text(["Created", "Succeeded"])
    expect(page.locator("#events")).to_contain_text("SuccessfulCreatePod")
    expect(page.locator(f'#replicas tr[data-pod="{name}-worker-1"] td').nth(6)).to_have_text("0")
    screenshot(page, "job-page")


def suspend_from_the_page(page) -> None:
    """Suspend a running job from its page: its state, suspension, replicas (none) and
    conditions say so, pushed."""
    expect(page.locator("#suspension")).to_contain_text("false")
    page.click("#toggle-suspend")
    expect(page.locator("#state .state")).to_have_text("Suspended")
    expect(page.locator("#suspension")).to_contain_text("true (suspended: no pods)")
    expect(page.locator("#replicas")).to_contain_text("No pods yet.")
    expect(page.locator("#conditions li.current strong")).to_contain_text(["Suspended"])


def test_suspend_and_resume_from_the_job_page(dashboard, client, page, tmp_path):
    """Suspend deletes the replicas and the page says Suspended, pushed; Resume runs them again;
    the list shows the state too."""
    name = unique("pause")
    marker = tmp_path / "go"
    client.create(gated_job(name, marker))
    client.wait_for_job(name, NAMESPACE, conditions=["Running"], timeout=60)
    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}/tfjobs/{name}")
    suspend_from_the_page(page)
    screenshot(page, "job-suspended")
    assert client.get(name, NAMESPACE)["spec"]["runPolicy"]["suspend"] is True

    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}")
    expect(page.locator(f'#jobs tr[data-name="{name}"] .state')).to_have_text("Suspended")
    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}/tfjobs/{name}")
    expect(page.locator("#toggle-suspend")).to_have_text("Resume")
    page.click("#toggle-suspend")
    expect(page.locator("#state .state")).to_have_text("Running")
    expect(page.locator(f'#replicas tr[data-pod="{name}-worker-0"] .phase')).to_have_text("Running")
    marker.touch()
    expect(page.locator("#state .state")).to_have_text("Succeeded")
    expect(page.locator("#toggle-suspend")).to_have_count(0)  # a finished job stays finished


def test_a_job_managed_elsewhere_is_marked_and_offers_no_suspend(dashboard, client, page):
    name = unique("elsewhere")
    job = python_job(name, "pass")
    job["metadata"] = {
        "name": name,
        "namespace": NAMESPACE,
        "labels": {"kueue.x-k8s.io/queue-name": "team-a"},
    }
    job["spec"]["runPolicy"] = {"managedBy": "kueue.x-k8s.io/multikueue"}
    client.create(job)
    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}")
    row = page.locator(f'#jobs tr[data-name="{name}"]')
    expect(row.locator(".managed")).to_have_text("managed by kueue.x-k8s.io/multikueue")
    expect(row.locator(".state")).to_have_text("Pending")  # nothing is written on it here
    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}/tfjobs/{name}")
    expect(page.locator("#manager")).to_contain_text("not this operator")
    expect(page.locator("#queue")).to_have_text("team-a")
    expect(page.locator("#conditions")).to_contain_text("This operator records nothing")
    expect(page.locator("#toggle-suspend")).to_have_count(0)
    screenshot(page, "job-managed-elsewhere")


def test_create_from_yaml_shows_the_api_error_inline(dashboard, client, page):
    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}")
    name = unique("pasted")
    bad = f"""apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: {name}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: two
      template:
        spec:
          containers:
            - name: tensorflow
              image: python:3.11-slim
              command: [python3, -c, "print('hi')"]
"""
    page.fill("#yaml", bad)
    page.click("#create-form button[type=submit]")
    result = page.locator("#create-result.error")
    expect(result).to_contain_text("is invalid")
    expect(result.locator(".causes")).to_contain_text("spec.tfReplicaSpecs.Worker.replicas")
    screenshot(page, "create-invalid")
    with pytest.raises(NotFound):
        client.get(name, NAMESPACE)

    page.fill("#yaml", "metadata: [unclosed")
    page.click("#create-form button[type=submit]")
    expect(page.locator("#create-result.error")).to_contain_text("does not parse")

    page.fill("#yaml", bad.replace("replicas: two", "replicas: 1"))
    page.click("#create-form button[type=submit]")
    expect(page.locator("#create-result.ok")).to_contain_text(f"Created {name}")
    expect(page.locator(f'#jobs tr[data-name="{name}"]')).to_be_visible()
    assert client.get(name, NAMESPACE)["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] == 1


def test_delete_asks_for_confirmation(dashboard, client, page, tmp_path):
    name = unique("doomed")
    client.create(gated_job(name, tmp_path / "never"))
    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}/tfjobs/{name}")
    page.click("#delete")
    dialog = page.locator("#confirm-delete")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert client.get(name, NAMESPACE)  # still there

    page.click("#delete")
    page.click("#confirm")
    page.wait_for_url(f"{dashboard.url}/namespaces/{NAMESPACE}")
    expect(page.locator(f'#jobs tr[data-name="{name}"]')).to_have_count(0)
    with pytest.raises(NotFound):
        client.get(name, NAMESPACE)


def test_read_only_by_default_and_served_below_a_prefix(cluster, namespace, client, page):
    name = unique("ro")
    client.create({**python_job(name, "pass"), "metadata": {"name": name, "namespace": NAMESPACE}})
    dash = Dashboard(cluster.kubeconfig, "--url-prefix=/tfjobs/ui")  # v0.5.3's path
    try:
        assert dash.url.startswith("http://127.0.0.1:") and dash.url.endswith("/tfjobs/ui")
        page.goto(f"{dash.url}/namespaces/{NAMESPACE}/tfjobs/{name}")
        expect(page.locator(".mode")).to_have_text("read-only")
        expect(page.locator("#live")).to_have_text("live")  # the stream is under the prefix too
        expect(page.locator("#delete")).to_have_count(0)
        page.click("a.back")  # links keep the prefix
        page.wait_for_url(f"{dash.url}/namespaces/{NAMESPACE}")
        expect(page.locator(f'#jobs tr[data-name="{name}"]')).to_be_visible()
        expect(page.locator("#create-form")).to_have_count(0)
        request = urllib.request.Request(
            f"{dash.url}/namespaces/{NAMESPACE}/tfjobs/{name}",
            method="DELETE",
            headers={"X-TFJob-Dashboard": "1"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 403
        assert client.get(name, NAMESPACE)
        rebinding = urllib.request.Request(f"{dash.url}/healthz", headers={"Host": "evil.example"})
        with pytest.raises(urllib.error.HTTPError) as bad_host:
            urllib.request.urlopen(rebinding, timeout=10)
        assert bad_host.value.code == 400
    finally:
        dash.stop()


def test_writes_need_the_dashboard_header(dashboard, client):
    """A cross-site form can POST but cannot add a custom header: such writes are refused."""
    request = urllib.request.Request(
        f"{dashboard.url}/namespaces/{NAMESPACE}/tfjobs",
        data=b"kind: TFJob\nmetadata: {name: csrf}\n",
        method="POST",
        headers={"Content-Type": "text/plain"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    with pytest.raises(NotFound):
        client.get("csrf", NAMESPACE)
    name = unique("csrf-suspend")
    client.create({**python_job(name, "pass"), "metadata": {"name": name, "namespace": NAMESPACE}})
    suspend = urllib.request.Request(
        f"{dashboard.url}/namespaces/{NAMESPACE}/tfjobs/{name}/suspend", data=b"", method="POST"
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(suspend, timeout=10)
    assert refused.value.code == 403
    assert client.get(name, NAMESPACE)["spec"]["runPolicy"].get("suspend") is False


# ---------------------------------------------------------------- PyTorchJobs (issue 23)


@pytest.fixture
def pytorch_client(cluster) -> Iterator[PyTorchJobClient]:
    with PyTorchJobClient(cluster.kubeconfig, namespace=NAMESPACE) as c:
        yield c


def gated_pytorchjob(name: str, marker: Path, workers: int = 1) -> dict:
    """A Master and ``workers`` workers that print their rank (the environment the operator
    gave them), then wait for ``marker`` to exist before exiting 0."""
    code = (
        "import os,time\n"
        "rank = os.environ['RANK']\n"
        "print('hello from rank', rank, 'of', os.environ['WORLD_SIZE'], flush=True)\n"
        f"while not os.path.exists({str(marker)!r}): time.sleep(0.05)\n"
        "print('bye from rank', rank)\n"
    )

    def replica(count: int) -> dict:
        container = {
            "name": "pytorch",
            "image": "localcluster/none",
            "command": [sys.executable, "-u", "-c", code],
        }
        return {"replicas": count, "template": {"spec": {"containers": [container]}}}

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"pytorchReplicaSpecs": {"Master": replica(1), "Worker": replica(workers)}},
    }


def test_a_pytorchjob_is_listed_and_its_page_follows_it(dashboard, pytorch_client, page, tmp_path):
    """Listed live beside the TFJobs with its kind; its page shows its Master and workers, their
    logs and its events, and follows it to Succeeded (the Master decides)."""
    name = unique("torch")
    marker = tmp_path / "go"
    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}")
    expect(page.locator("h1")).to_have_text(
        f"TFJobs and PyTorchJobs and XGBoostJobs and JAXJobs and PaddleJobs in {NAMESPACE}"
    )
    expect(page.locator("#live")).to_have_text("live")
    pytorch_client.create(gated_pytorchjob(name, marker))
    row = page.locator(f'#jobs tr[data-key="pytorchjobs/{name}"]')
    expect(row.locator(".kind")).to_have_text("PyTorchJob")
    expect(row.locator(".state")).to_have_text("Running")
    expect(row.locator("td").nth(3)).to_have_text("Master=1,Worker=1")
    screenshot(page, "jobs-list-pytorch")
    row.locator("a").click()
    page.wait_for_url(f"{dashboard.url}/namespaces/{NAMESPACE}/pytorchjobs/{name}")
    expect(page.locator("#job-kind")).to_have_text("PyTorchJob")
    for pod, rank in ((f"{name}-master-0", 0), (f"{name}-worker-0", 1)):
        expect(page.locator(f'#replicas tr[data-pod="{pod}"] .phase')).to_have_text("Running")
        expect(page.locator(f'pre[data-pod="{pod}"]')).to_contain_text(
            f"hello from rank {rank} of 2"
        )
    expect(page.locator("#replicas tbody tr td:first-child")).to_have_text(["master", "worker"])
    expect(page.locator("#events")).to_contain_text("SuccessfulCreatePod")
    marker.touch()
    expect(page.locator(f'pre[data-pod="{name}-master-0"]')).to_contain_text("bye from rank 0")
    expect(page.locator("#state .state")).to_have_text("Succeeded")
    expect(page.locator("#conditions")).to_contain_text("PyTorchJobSucceeded")
    expect(page.locator("#toggle-suspend")).to_have_count(0)
    screenshot(page, "job-page-pytorch")


def test_a_pytorchjob_is_suspended_resumed_and_deleted_from_its_page(
    dashboard, pytorch_client, page, tmp_path
):
    name = unique("torch-pause")
    pytorch_client.create(gated_pytorchjob(name, tmp_path / "never"))
    pytorch_client.wait_for_job(name, NAMESPACE, conditions=["Running"], timeout=60)
    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}/pytorchjobs/{name}")
    suspend_from_the_page(page)
    assert pytorch_client.get(name, NAMESPACE)["spec"]["runPolicy"]["suspend"] is True
    expect(page.locator("#toggle-suspend")).to_have_text("Resume")
    page.click("#toggle-suspend")
    expect(page.locator("#state .state")).to_have_text("Running")
    expect(page.locator(f'#replicas tr[data-pod="{name}-master-0"] .phase')).to_have_text("Running")
    assert pytorch_client.get(name, NAMESPACE)["spec"]["runPolicy"]["suspend"] is False

    page.click("#delete")
    expect(page.locator("#confirm-delete")).to_contain_text(f"Delete PyTorchJob {NAMESPACE}/{name}")
    page.click("#confirm")
    page.wait_for_url(f"{dashboard.url}/namespaces/{NAMESPACE}")
    expect(page.locator(f'#jobs tr[data-key="pytorchjobs/{name}"]')).to_have_count(0)
    with pytest.raises(NotFound):
        pytorch_client.get(name, NAMESPACE)


def test_a_pytorchjob_pasted_as_yaml_is_created_and_a_tfjob_of_its_name_is_another_row(
    dashboard, client, pytorch_client, page, tmp_path
):
    import yaml

    name = unique("pasted-torch")
    page.goto(f"{dashboard.url}/namespaces/{NAMESPACE}")
    job = gated_pytorchjob(name, tmp_path / "never")
    del job["metadata"]["namespace"]
    page.fill("#yaml", yaml.safe_dump(job))
    page.click("#create-form button[type=submit]")
    result = page.locator("#create-result.ok")
    expect(result).to_contain_text(f"Created {name}")
    expect(result.locator("a")).to_have_attribute(
        "href", f"/namespaces/{NAMESPACE}/pytorchjobs/{name}"
    )
    assert pytorch_client.get(name, NAMESPACE)["kind"] == "PyTorchJob"
    client.create(gated_job(name, tmp_path / "never"))  # a TFJob of the same name
    expect(page.locator(f'#jobs tr[data-name="{name}"] .kind')).to_have_text(
        ["TFJob", "PyTorchJob"]
    )
    # a kind the YAML names but the operator's CRDs do not: refused with the reason
    page.fill("#yaml", yaml.safe_dump({**job, "kind": "MPIJob"}))
    page.click("#create-form button[type=submit]")
    expect(page.locator("#create-result.error")).to_contain_text(
        "expected kind TFJob or PyTorchJob or XGBoostJob or JAXJob or PaddleJob, got 'MPIJob'"
    )
    for plural in ("pytorchjobs", "tfjobs"):
        url = f"{dashboard.url}/namespaces/{NAMESPACE}/{plural}/{name}"
        assert _write(url, "DELETE", **{"X-TFJob-Dashboard": "1"})[0] == 200
    expect(page.locator(f'#jobs tr[data-name="{name}"]')).to_have_count(0)


# ---------------------------------------------------------------- issue 27, High 2


def _get(url: str, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def _write(url: str, method: str, body: bytes = b"", **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, data=body or None, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--address=0.0.0.0"],
        ["--address=0.0.0.0", "--auth=none"],
        ["--address=0.0.0.0", "--auth=kubernetes", "--allowed-host=dash.example"],
    ],
    ids=["loopback", "any-address-token", "any-address-no-auth", "any-address-kubernetes"],
)
def test_a_rebinding_style_request_is_refused_on_every_bind(cluster, namespace, args):
    """DNS rebinding makes the browser send the attacker's name as Host: on every bind the
    dashboard answers only the names it knows (v0.5.3's port answered any Host on 0.0.0.0)."""
    dash = Dashboard(cluster.kubeconfig, "--allow-write", *args)
    try:
        status, _ = _get(f"{dash.url}/healthz", Host="evil.example")
        assert status == 400
        status, _ = _get(f"{dash.url}/namespaces/{NAMESPACE}", Host=f"evil.example:{dash.port}")
        assert status == 400
        assert _get(f"{dash.url}/healthz", Host=f"localhost:{dash.port}")[0] == 200
        if "--allowed-host=dash.example" in args:
            assert _get(f"{dash.url}/healthz", Host="dash.example")[0] == 200
        if args:
            warning = dash.read_line("warning: serving on 0.0.0.0")
            assert "reachable from other machines" in warning
            if "--auth=none" in args:
                assert "NO sign-in" in warning
    finally:
        dash.stop()


def test_a_yaml_alias_bomb_is_refused_at_once(dashboard):
    """Issue 27, item 3: 638 bytes that expand to billions of nodes took 2.5 GB in 7 s."""
    laughs = "\n".join(
        ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    )
    started = time.monotonic()
    status, text = _write(
        f"{dashboard.url}/namespaces/{NAMESPACE}/tfjobs",
        "POST",
        laughs.encode(),
        **{"X-TFJob-Dashboard": "1", "Content-Type": "application/yaml"},
    )
    assert status == 400 and "expands to more than" in text
    assert time.monotonic() - started < 3.0


def test_cross_origin_writes_are_refused(dashboard, client):
    """A write must come from the dashboard's own page: Origin and Sec-Fetch-Site say so."""
    name = unique("xorigin")
    body = f"kind: TFJob\nmetadata: {{name: {name}}}\n".encode()
    url = f"{dashboard.url}/namespaces/{NAMESPACE}/tfjobs"
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
    ):
        status, text = _write(url, "POST", body, **{"X-TFJob-Dashboard": "1", **headers})
        assert status == 403, text
    with pytest.raises(NotFound):
        client.get(name, NAMESPACE)


def test_a_dashboard_on_any_address_asks_for_its_token(cluster, namespace, client, page):
    """Bound beyond loopback it signs callers in: a browser once, with the printed URL, then
    by a session cookie; the page's own writes still work."""
    dash = Dashboard(cluster.kubeconfig, "--address=0.0.0.0", "--allow-write")
    try:
        sign_in = dash.read_line("?token=").split()[-1]
        token = sign_in.split("?token=")[1]
        response = page.goto(f"{dash.url}/namespaces/{NAMESPACE}")
        assert response is not None and response.status == 401
        expect(page.locator("h1")).to_have_text("Sign in")
        page.goto(f"{dash.url}/namespaces/{NAMESPACE}?token={token}")
        assert "token=" not in page.url  # exchanged for a session, the address cleaned
        expect(page.locator("#live")).to_have_text("live")
        name = unique("signed")
        page.fill("#yaml", yaml_job(name))
        page.click("#create-form button[type=submit]")
        expect(page.locator("#create-result.ok")).to_contain_text(f"Created {name}")
        assert client.get(name, NAMESPACE)
        screenshot(page, "signed-in")
        assert _get(f"{dash.url}/namespaces/{NAMESPACE}")[0] == 401  # no session, no token
        status, _ = _get(f"{dash.url}/namespaces/{NAMESPACE}", Authorization=f"Bearer {token}")
        assert status == 200
    finally:
        page.context.clear_cookies()
        dash.stop()


def _service_account_token(cluster, name: str, verbs: list[str], resource: str = "tfjobs") -> str:
    """A token of a new ServiceAccount allowed ``verbs`` on ``resource`` of the test
    namespace."""
    api = cluster.client
    api.create(("", "v1", "serviceaccounts"), NAMESPACE, {"metadata": {"name": name}})
    if verbs:
        rbac = ("rbac.authorization.k8s.io", "v1")
        rule = {"apiGroups": ["kubeflow.org"], "resources": [resource], "verbs": verbs}
        api.create((*rbac, "roles"), NAMESPACE, {"metadata": {"name": name}, "rules": [rule]})
        binding = {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": rbac[0], "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}],
        }
        api.create((*rbac, "rolebindings"), NAMESPACE, binding)
    with TFJobClient(cluster.kubeconfig) as admin:
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
        path = f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{name}/token"
        return str(admin.kube.transport.request("POST", path, body=request)["status"]["token"])


def test_kubernetes_sign_in_reviews_the_callers_token_and_rights(
    cluster, namespace, client, pytorch_client, page, tmp_path
):
    """kube-rbac-proxy's way: the caller's own token (TokenReview) and, per request, the
    caller's own rights on the kind of job it concerns (SubjectAccessReview): one who may read
    TFJobs only sees no PyTorchJob."""
    viewer = _service_account_token(cluster, unique("viewer"), ["get", "list"])
    torch_viewer = _service_account_token(
        cluster, unique("torch-viewer"), ["get", "list"], "pytorchjobs"
    )
    stranger = _service_account_token(cluster, unique("stranger"), [])
    dash = Dashboard(cluster.kubeconfig, "--address=0.0.0.0", "--auth=kubernetes", "--allow-write")
    try:
        name = unique("kept")
        client.create(
            {**python_job(name, "pass"), "metadata": {"name": name, "namespace": NAMESPACE}}
        )
        hidden = unique("hidden-torch")
        pytorch_client.create(gated_pytorchjob(hidden, tmp_path / "never"))
        page.goto(f"{dash.url}/namespaces/{NAMESPACE}?token={viewer}")
        expect(page.locator(f'#jobs tr[data-name="{name}"]')).to_be_visible()

        def listing(token: str) -> str:
            return _get(f"{dash.url}/namespaces/{NAMESPACE}", Authorization=f"Bearer {token}")[1]

        torch_row, tf_row = f'data-key="pytorchjobs/{hidden}"', f'data-key="tfjobs/{name}"'
        wait_for(lambda: torch_row in listing(torch_viewer), 30, what="the PyTorchJob listed")
        assert tf_row not in listing(torch_viewer)  # each sees the kinds it may read
        assert torch_row not in listing(viewer) and tf_row in listing(viewer)
        status, text = _get(
            f"{dash.url}/namespaces/{NAMESPACE}/pytorchjobs/{hidden}",
            Authorization=f"Bearer {viewer}",
        )
        assert status == 403 and "may not get PyTorchJobs" in text
        bearer = {"Authorization": f"Bearer {viewer}", "X-TFJob-Dashboard": "1"}
        status, text = _write(
            f"{dash.url}/namespaces/{NAMESPACE}/tfjobs/{name}", "DELETE", **bearer
        )
        assert status == 403 and "may not delete TFJobs" in text
        assert client.get(name, NAMESPACE)
        status, text = _get(
            f"{dash.url}/namespaces/{NAMESPACE}", Authorization=f"Bearer {stranger}"
        )
        assert status == 403 and "may not get TFJobs" in text
        assert _get(f"{dash.url}/namespaces/{NAMESPACE}", Authorization="Bearer forged")[0] == 401
    finally:
        page.context.clear_cookies()
        dash.stop()


def yaml_job(name: str) -> str:
    job = python_job(name, "pass")
    job["metadata"] = {"name": name}
    import yaml

    return yaml.safe_dump(job)


@pytest.fixture(scope="module", autouse=True)
def _chromium_is_real():
    assert shutil.which(str(CHROMIUM))
