"""Trace.name_test: a table of a test over the names, whole or read for some slices only; and
the case-blind patterns such tests use."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.conftest import DATA
from tui.model import patterns
from tui.model.ingest import load_trace


def test_a_table_among_some_names_agrees_with_the_whole_one_where_it_is_read():
    trace = load_trace(DATA / "gpu_streams.json")
    s = trace.slices
    test = lambda n: "a" in n.lower()  # noqa: E731
    whole = trace.name_test(test)
    assert len(whole) == len(trace.names) + 1 and not whole[-1]
    gpu = np.flatnonzero(trace.kind_mask("gpu"))
    among = np.concatenate([s.name[gpu], [-1]])  # -1: a slice with no name
    part = trace.name_test(test, among)
    assert part.shape == whole.shape and not part[-1]
    assert np.array_equal(part[among], whole[among])
    untested = np.setdiff1d(np.arange(len(trace.names)), among)
    assert len(untested) and not part[untested].any() and whole[untested].any()


def test_case_blind_patterns_answer_as_ignorecase_does():
    names = [
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        "NCCLKERNEL_ALLGATHER",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
        "VOID AT::NATIVE::REDUCE_KERNEL<512, 1>",
        "triton_poi_fused_layer_norm_0",
        "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1",
        "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8",
        "ampere_sgemm_128x64_tn",
        "AMPERE_TF32_S1688GEMM_TF32_128X128_NN",
        "MIOpenConvFwd",
        "cross_device_reduce_1stage",
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        "aten::mm",
        "Memcpy HtoD (Pageable -> Device)",
        "tenſorop_gemm",  # a long s: IGNORECASE folds it to s, lowering does not
        "mıopen_conv",  # a dotless i
    ]
    blind = {k: v for k, v in vars(patterns).items() if isinstance(v, patterns.CaseBlind)}
    assert len(blind) >= 8
    for name, pattern in blind.items():
        plain = re.compile(pattern.pattern, re.IGNORECASE)
        assert [pattern.search(n) for n in names] == [bool(plain.search(n)) for n in names], name
    with pytest.raises(ValueError, match="upper-case escape"):
        patterns.CaseBlind(r"nccl\W")
