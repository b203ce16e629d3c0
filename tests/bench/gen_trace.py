"""Write a synthetic Kineto-shaped trace of about N events, for load benchmarks.

Shape, per profiler step and per CPU thread (two threads): a `ProfilerStep#k` annotation holding
groups of nested CPU ops (`aten::linear` > `aten::addmm` > `cudaLaunchKernel`), each launch with an
`ac2g` flow start, and the kernel it starts on one of two GPU streams with its flow end. Kernel
names are long templated C++ names, as real ones are. Timestamps are float microseconds relative to
`baseTimeNanoseconds`, with nanosecond digits, and the GPU events come after the CPU events (Kineto
writes them out of time order). The output is written one event per line, as Kineto does.

Usage: python tests/bench/gen_trace.py EVENTS OUT.json [--gzip]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from typing import IO

KERNELS = [
    "void cutlass::Kernel2<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::threadblock::"
    "MmaMultistage<cutlass::gemm::GemmShape<{n}, 128, 32>, cutlass::gemm::GemmShape<64, 64, 32>, "
    "cutlass::gemm::GemmShape<16, 8, 16>, cutlass::bfloat16_t, cutlass::layout::RowMajor>, "
    "cutlass::epilogue::threadblock::Epilogue<cutlass::gemm::GemmShape<{n}, 128, 32> > > >"
    "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_{n}x128_32x5_tn_align8::Params)",
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<"
    "at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, "
    "at::native::CUDAFunctor_add<float> const&)::{{lambda(int)#1}}>(int, {n})",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
    "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, {n}, 64, 4, false, false, "
    "cutlass::bfloat16_t, Flash_kernel_traits<128, {n}, 64, 4, cutlass::bfloat16_t> >, false, "
    "true, false, false, true, true, false, false>(flash::Flash_fwd_params)",
]
GROUPS_PER_STEP = 50  # linear > addmm > launch (+ flow start), kernel (+ flow end)


def _line(event: dict[str, object]) -> str:
    # Kineto writes microseconds with three decimals (nanosecond digits).
    return json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in event.items()})


def _op_args(ext: int, inputs: int) -> dict[str, object]:
    return {
        "External id": ext,
        "Record function id": 0,
        "Sequence number": ext,
        "Fwd thread id": 0,
        "Input Dims": [[64, 64], [64, 64], [64], [], []][:inputs],
        "Input type": ["float", "float", "float", "Scalar", "Scalar"][:inputs],
        "Input Strides": [[64, 1], [1, 64], [1], [], []][:inputs],
        "Concrete Inputs": ["", "", "", "1", "1"][:inputs],
        "Ev Idx": ext,
    }


def _kernel_args(corr: int, stream: int) -> dict[str, object]:
    return {
        "External id": corr + 1,
        "queued": 0,
        "device": 0,
        "context": 1,
        "stream": stream,
        "correlation": corr,
        "registers per thread": 128,
        "shared memory": 36864,
        "blocks per SM": 0.5,
        "warps per SM": 2.0,
        "grid": [128, 1, 1],
        "block": [128, 1, 1],
        "est. achieved occupancy %": 6,
    }


def generate(events: int, out: IO[str], seed: int = 0) -> int:
    """Write the trace; returns how many events were written."""
    rng = random.Random(seed)
    pid = 4242
    threads = (4242, 4250)
    streams = (7, 20)
    out.write(
        '{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "Synthetic GPU"}],\n'
    )
    out.write('  "traceEvents": [\n')
    written = 0
    gpu_lines: list[str] = []
    t = 1000.0
    corr = 1
    step = 0
    first = True

    def emit(line: str) -> None:
        nonlocal first, written
        out.write(("" if first else ",\n") + "  " + line)
        first = False
        written += 1

    for tid in threads:
        emit(
            _line(
                {
                    "name": "thread_name",
                    "ph": "M",
                    "ts": 0,
                    "pid": pid,
                    "tid": tid,
                    "args": {"name": f"thread {tid} (python3)"},
                }
            )
        )
    while written + len(gpu_lines) < events:
        tid = threads[step % 2]
        step_start = t
        cpu_lines: list[str] = []
        for _ in range(GROUPS_PER_STEP):
            lin, add = t + 1.125, t + 3.375
            launch = add + 3.5
            kstart = launch + 5.0 + rng.random() * 10
            kdur = 2.0 + rng.random() * 40
            stream = streams[corr % 2]
            kname = KERNELS[(corr // 2) % len(KERNELS)].format(n=64 << (corr % 4))
            cpu = {"pid": pid, "tid": tid}
            cpu_lines += [
                _line(
                    {
                        "ph": "X",
                        "cat": "cpu_op",
                        "name": "aten::linear",
                        **cpu,
                        "ts": lin,
                        "dur": 20.5,
                        "args": _op_args(corr, 3),
                    }
                ),
                _line(
                    {
                        "ph": "X",
                        "cat": "cpu_op",
                        "name": "aten::addmm",
                        **cpu,
                        "ts": add,
                        "dur": 15.0,
                        "args": _op_args(corr + 1, 5),
                    }
                ),
                _line(
                    {
                        "ph": "X",
                        "cat": "cuda_runtime",
                        "name": "cudaLaunchKernel",
                        **cpu,
                        "ts": launch,
                        "dur": 6.25,
                        "args": {"External id": corr + 1, "cbid": 211, "correlation": corr},
                    }
                ),
                _line({"ph": "s", "id": corr, **cpu, "ts": launch, "cat": "ac2g", "name": "ac2g"}),
            ]
            gpu = {"pid": 0, "tid": stream}
            gpu_lines += [
                _line(
                    {
                        "ph": "X",
                        "cat": "kernel",
                        "name": kname,
                        **gpu,
                        "ts": kstart,
                        "dur": kdur,
                        "args": _kernel_args(corr, stream),
                    }
                ),
                _line(
                    {
                        "ph": "f",
                        "id": corr,
                        **gpu,
                        "ts": kstart,
                        "cat": "ac2g",
                        "name": "ac2g",
                        "bp": "e",
                    }
                ),
            ]
            corr += 2
            t += 25.0
        emit(
            _line(
                {
                    "ph": "X",
                    "cat": "user_annotation",
                    "name": f"ProfilerStep#{step}",
                    "pid": pid,
                    "tid": tid,
                    "ts": step_start,
                    "dur": t - step_start + 1,
                    "args": {},
                }
            )
        )
        for line in cpu_lines:
            emit(line)
        step += 1
        t += 3.0
    for line in gpu_lines:
        emit(line)
    out.write('\n  ],\n  "traceName": "synthetic",\n  "displayTimeUnit": "ms",\n')
    out.write('  "baseTimeNanoseconds": 1700000000000000000\n}\n')
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("events", type=int)
    parser.add_argument("out")
    parser.add_argument("--gzip", action="store_true")
    args = parser.parse_args()
    opener = gzip.open if args.gzip else open
    with opener(args.out, "wt") as f:
        n = generate(args.events, f)
    print(f"{args.out}: {n} events")


if __name__ == "__main__":
    main()
