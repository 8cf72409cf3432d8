"""The tensormap_and_ringbuffer runtime: its own pooled worker."""

import pytest


@pytest.mark.cardguard(runtime="tensormap_and_ringbuffer", timeout=60)
class TestRing:
    def test_ones(self, worker):
        assert worker.vector_add([1.0] * 4, [1.0] * 4) == [2.0] * 4

    def test_mixed(self, worker):
        assert worker.vector_add([0.5, 1.5, 2.5], [0.5, 0.5, 0.5]) == [1.0, 2.0, 3.0]

    @pytest.mark.sdma
    def test_sdma_copy(self, worker):
        a = [float(i) for i in range(128)]
        assert worker.vector_add(a, [0.0] * 128) == a

    @pytest.mark.xfail(reason="vector_add does not saturate", strict=True)
    def test_saturation(self, worker):
        assert worker.vector_add([3.0e38], [3.0e38]) == [3.0e38]


def test_host_only():
    assert sum(range(10)) == 45
