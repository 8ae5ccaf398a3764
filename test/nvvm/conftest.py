"""pytest setup of the NVVM builder checks: the marker, and every selected check started in
parallel once collection is done (each is a child process; see nvvm_builders.prefetch)."""

import nvvm_builders


def pytest_configure(config):
    config.addinivalue_line("markers", "nvvm_builders: regression checks of the upstream NVVM "
                                       "Python builders (test/nvvm, about a minute on 2 cores)")


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    nvvm_builders.prefetch([(item.callspec.params["item"], item.callspec.params["check"])
                            for item in session.items
                            if item.get_closest_marker("nvvm_builders") is not None])


def pytest_sessionfinish(session):
    nvvm_builders.cancel_prefetch()
