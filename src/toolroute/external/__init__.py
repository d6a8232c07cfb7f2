"""Tools and queries from outside the project (public benchmarks on PyPI), used as data only."""
