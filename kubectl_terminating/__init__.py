"""kubectl terminating: explain why Pods and Namespaces are stuck in Terminating."""

__version__ = "0.1.0"
