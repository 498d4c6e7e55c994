"""The conformance kit: pytest + hypothesis suites that a device plugin author runs on their device."""
