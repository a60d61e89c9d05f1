"""Pod, service and PodGroup control, and the controller-ref managers that claim objects.

Everything that writes pods, services or PodGroups on behalf of a job goes through here, so
events (``SuccessfulCreatePod``, ``FailedDeleteService``, ...) are recorded in one place.
"""
