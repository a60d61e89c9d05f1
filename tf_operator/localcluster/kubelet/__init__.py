"""Kubelet emulation: node registration plus simulated or process container runtimes."""

from tf_operator.localcluster.kubelet.ipam import IPAllocator
from tf_operator.localcluster.kubelet.kubelet import Kubelet
from tf_operator.localcluster.kubelet.node import NodeConfig
from tf_operator.localcluster.kubelet.process import ProcessRuntime
from tf_operator.localcluster.kubelet.simulated import (
    EXIT_CODE,
    RUN_SECONDS,
    START_SECONDS,
    SimulatedRuntime,
)
from tf_operator.localcluster.kubelet.timers import Clock, ManualClock, TimerQueue

__all__ = [
    "EXIT_CODE",
    "RUN_SECONDS",
    "START_SECONDS",
    "Clock",
    "IPAllocator",
    "Kubelet",
    "ManualClock",
    "NodeConfig",
    "ProcessRuntime",
    "SimulatedRuntime",
    "TimerQueue",
]
