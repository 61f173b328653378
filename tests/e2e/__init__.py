"""The end-to-end tier: a package, so that its conftest and the suite's own each have a module name of their own."""
