"""The ``yukon`` command: the one place that wires ``protocol``, ``server`` and ``client``."""
