"""kperf: a reproducible Kafka performance study."""

__version__ = "0.1.0"
