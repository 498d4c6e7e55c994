"""Lets ``pytest plugins/tutorial/tests`` import ``hetero_sdk_tutorial`` without installing it: pytest puts
the folder of this file on ``sys.path`` before it collects the tests."""
