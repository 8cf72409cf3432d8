"""Vector adds on the pooled worker of the host_build_graph runtime."""

import pytest


@pytest.mark.cardguard(runtime="host_build_graph")
class TestVectorAdd:
    def test_small(self, worker):
        assert worker.vector_add([1.0, 2.0], [3.0, 4.0]) == [4.0, 6.0]

    def test_zeros(self, worker):
        assert worker.vector_add([0.0] * 8, [0.0] * 8) == [0.0] * 8

    @pytest.mark.parametrize("n", [16, 64])
    def test_sizes(self, worker, n):
        a = [float(i) for i in range(n)]
        assert worker.vector_add(a, a) == [2 * x for x in a]

    def test_negative(self, worker):
        assert worker.vector_add([-1.5, 2.5], [1.5, -2.5]) == [0.0, 0.0]


@pytest.mark.cardguard(runtime="host_build_graph", retries=1)
class TestBlocks:
    @pytest.mark.parametrize("blocks", [1, 4])
    def test_block_dims(self, worker, blocks):
        a = [1.0] * 32
        assert worker.vector_add(a, a, block_dim=blocks) == [2.0] * 32
