"""What event categories and names mean, kept in one place (as HTA keeps its named patterns)."""

from __future__ import annotations

import re


class CaseBlind:
    """A case-blind pattern that lowers an ASCII text and searches it case-sensitively: 3-4x
    faster than re.IGNORECASE on the long C++ kernel names these are tested on (IGNORECASE tries
    both cases of each alternative at every position; 12 ms of a cached `summary` on a DLRM trace
    went to one pattern). Other text gets re.IGNORECASE, whose folding lowering does not match
    ("ſ" is an "s" to it)."""

    __slots__ = ("_blind", "_lowered", "pattern")

    def __init__(self, pattern: str) -> None:
        if re.search(r"\\[A-Z]", pattern):  # lowered, \W \D \S \B would change meaning
            raise ValueError(f"an upper-case escape in a case-blind pattern: {pattern}")
        self.pattern = pattern
        self._lowered = re.compile(pattern.lower())
        # Compiled on the first non-ASCII name, which most traces never have: it is half of
        # what these patterns cost every start.
        self._blind: re.Pattern[str] | None = None

    def search(self, text: str) -> bool:
        if text.isascii():
            return self._lowered.search(text.lower()) is not None
        if self._blind is None:
            self._blind = re.compile(self.pattern, re.IGNORECASE)
        return self._blind.search(text) is not None


# Categories of work that runs on a device stream (lower-cased before lookup).
DEVICE_CATEGORIES = frozenset(
    {
        "kernel",
        "gpu_memcpy",
        "gpu_memset",
        "gpu_user_annotation",
        "memcpy",  # 2021 Kineto wrote Kernel/Memcpy/Memset
        "memset",
        "mtia_ccp_events",
        "cuda_sync",  # CUPTI's record of a stream/context/event sync, written on the device
        "cuda_profiler_range",  # CUPTI's range profiler: one slice per measured range
    }
)
# GPU work proper (what busy and idle time are measured from), as opposed to annotations: CUDA
# and HIP kernels, copies and sets, MTIA's device events, CUPTI profiler ranges.
GPU_WORK_CATEGORIES = frozenset(
    {
        "kernel",
        "gpu_memcpy",
        "gpu_memset",
        "memcpy",
        "memset",
        "mtia_ccp_events",
        "cuda_profiler_range",
    }
)

# CPU-side calls into the runtime or driver; their `correlation` arg names the GPU work.
RUNTIME_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver", "runtime", "mtia_runtime"})

# Host-side events that torch's key_averages() counts as ops (2021 Kineto: Operator, Runtime),
# every runtime call among them. Under with_stack its tree holds the Python frames too: they get
# rows of their own, and their time is not the Self CPU of the op around them.
PYTHON_FRAME_CATEGORY = "python_function"


def is_python_frame(category: str) -> bool:
    return category.lower() == PYTHON_FRAME_CATEGORY


HOST_OP_CATEGORIES = frozenset(
    {"cpu_op", "user_annotation", "operator", PYTHON_FRAME_CATEGORY} | RUNTIME_CATEGORIES
)
# The ops that can own GPU work in key_averages(): a kernel's `External id` is the correlation id
# of the record_function on top of the op stack when it was launched. Python frames and runtime
# calls are never that record (they carry no id of their own, or only the op's).
EXTERNAL_ID_OWNER_CATEGORIES = frozenset({"cpu_op", "user_annotation", "operator"})
# An fp32 GEMM or convolution whose kernel has one of these in its name ran on tensor cores in
# TF32 (cuBLAS/cuBLASLt `tf32`, `s1688`/`s16816` MMA shapes, CUTLASS `tensorop`; hipBLASLt
# `xf32`): fp32 data reaches tensor cores no other way, so its roof is the TF32 peak. `xmma`
# alone says nothing of the math: its names carry the types, A and B, then the math's
# (`f32f32_tf32f32_f32` is TF32; `f32f32_f32f32_f32` is fp32 on CUDA cores, as cuBLAS ran a
# 4096x4096 fp32 matmul on an H200 at 51 TFLOP/s, 77% of its fp32 peak).
TF32_KERNEL = CaseBlind(r"tf32|xf32|s1688|s16816|tensorop")
# xmma's types for fp32 data and fp32 math: its path on CUDA cores (`..._ffma_...`).
_XMMA_FP32_MATH = r"\w*?_f32f32_f32f32_f32"
# GEMM and convolution kernels (cuBLAS, cuBLASLt's nvjet, CUTLASS, cuDNN, hipBLASLt's Cijk_,
# rocBLAS, MIOpen), the work tensor cores can run. Normalisation kernels cuDNN names are not.
MATMUL_KERNEL = CaseBlind(
    r"gemm|gemv|nvjet|cutlass|Cijk_|xmma|wgmma|conv(?!ert)|winograd|wgrad|dgrad|fprop|scudnn"
    r"|hcudnn|cudnn_.*_nn_v1|rocblas|MIOpen"
)
# Of those, cuDNN's convolutions (implicit GEMMs included), as against the GEMMs.
CONVOLUTION_KERNEL = re.compile(
    r"conv(?!ert)|winograd|wgrad|dgrad|fprop|scudnn|implicit_gemm|direct_group|grouped_direct",
    re.IGNORECASE,
)
# Of those, the ones that ran on tensor cores: the TensorBoard plugin's list (after NVIDIA
# PyProf: MMA shapes h884 s1688 16816 i8816 c1688, hmma, xmma and cuDNN's tensor-core
# convolutions), with what came after it: CUTLASS `tensorop`, Hopper `wgmma` and cuBLASLt's
# `nvjet`, TF32 in the name, AMD's matrix-core tiles (hipBLASLt `MI16x16`, `mfma`); xmma but for
# its fp32 path (_XMMA_FP32_MATH).
TENSOR_CORE_KERNEL = CaseBlind(
    r"h884|s884|h1688|s1688|hmma|i8816|16816|16832|c1688|dgrad_1x1_stride_2x2"
    r"|first_layer_wgrad_kernel|conv1x1|conv2d_c1_k1|direct_group|xmma(?!" + _XMMA_FP32_MATH + ")"
    r"|tensorop|wgmma|nvjet"
    r"|tf32|xf32|_MI\d+x\d+|mfma"
)
# fp32 GEMMs and convolutions on CUDA cores (cuBLAS `sgemm` and its small-matrix `gemmSN`,
# cuDNN's `scudnn` and implicit-GEMM/Winograd/direct kernels on floats): with TF32 or a 16-bit
# dtype they could run on tensor cores.
FP32_CUDA_CORE_KERNEL = CaseBlind(
    r"sgemm|scudnn|gemmSN_\w+<float|gemmk1_kernel<float|winograd\w*<float"
    r"|(dgrad|wgrad)\w*engine<float|convolve_\w*<float|grouped_direct_kernel<float"
    r"|xmma" + _XMMA_FP32_MATH
)
# Elementwise, reduction and normalisation kernels of eager torch and cuDNN: one memory pass
# each, what torch.compile fuses into one. Triton kernels are compiled (already fused).
FUSABLE_KERNEL = CaseBlind(
    r"^(?!triton_).*(elementwise_kernel|reduce_kernel|layer_norm|LayerNorm|rms_?norm|RMSNorm"
    r"|batch_norm|bn_fw|bn_bw|softmax|dropout|act_and_mul|index_elementwise)"
)
# key_averages() folds every ProfilerStep#N into one row under this name.
PROFILER_STEP = re.compile(r"^ProfilerStep#\d+$")
PROFILER_STEP_ROW = "ProfilerStep*"

# Flow categories that join a CPU launch to the GPU work it started, newest first.
LAUNCH_FLOW_CATEGORIES = frozenset({"ac2g", "async", "async_gpu", "async_cpu_to_gpu"})

# Host calls that wait for the GPU: explicit synchronisation, event waits, blocking copies.
SYNC_NAME = re.compile(
    r"^(cuda|hip)(DeviceSynchronize|StreamSynchronize|EventSynchronize"
    r"|Memcpy|Memcpy2D|Memcpy3D|MemcpyToSymbol|MemcpyFromSymbol|MemcpyWithStream)$"
)
# Calls that make a GPU stream wait for an event another recorded: a dependency between streams,
# not a wait of the CPU (the call returns at once).
STREAM_WAIT_NAME = re.compile(r"^(cuda|hip)StreamWaitEvent$")
# Flow ids from here up are CUDA graph dependencies between graph nodes (torch 2.14 writes them
# with the launch category `ac2g`), not launches; correlation ids stay far below.
GRAPH_DEPENDENCY_FLOW_ID = 1 << 40

# Communication kernels by name, family by family (the README's "Communication" lists them):
# the collective libraries' kernels, and the all-reduce, dispatch and combine kernels that
# serving engines, torch's symmetric memory and expert-parallel libraries write themselves.
# Only names that say so: a fused Inductor kernel named after an all_gather is computation.
COMM_KERNEL_FAMILIES = {
    "NCCL, RCCL, HCCL, MSCCL++": r"nccl|rccl|hccl|msccl",
    "torch symmetric memory (symm_mem)": r"symmetric_memory|multimem_",
    "one-shot and two-shot all-reduce (TensorRT-LLM, FlashInfer)": (
        r"one_?shot_?all_?reduce|two_?shot_?all_?reduce|allreduce_fusion"
    ),
    "custom all-reduce (vLLM, SGLang, aiter)": (
        r"cross_device_reduce|custom_?all_?reduce|quickreduce"
    ),
    "NVSHMEM": r"nvshmem",
    "DeepEP dispatch and combine": r"deep_?ep::",
    "Transformer Engine userbuffers": r"userbuffers",
}
COMM_KERNEL_NAME = CaseBlind("|".join(f"(?:{family})" for family in COMM_KERNEL_FAMILIES.values()))
# Ops whose own GPU work is communication, whatever the kernels are named: the op torch charges
# a kernel to (attribution's), when it is a c10d or functional collective, a symm_mem op, a
# serving engine's custom all-reduce op, or NCCL's parameter record.
COMM_OP_NAME = re.compile(
    r"^(c10d|_c10d_functional|c10d_functional|symm_mem|_C_custom_ar|_custom_ar|deep_ep|nvshmem)::"
    r"|^[\w.]+::\w*(all_?reduce|all_?gather|reduce_?scatter|all_?to_?all)\w*$"
    r"|^record_param_comms$|^(nccl|rccl|hccl|gloo):"
)
# Collective communication on any lane, for colouring: the kernels above, the ops above, and the
# annotations (nccl:all_reduce, gloo:all_reduce).
COMM_NAME = CaseBlind(
    rf"{COMM_KERNEL_NAME.pattern}|gloo|all_?reduce|all_?gather|reduce_?scatter|alltoall"
)
# What the CPU does while the GPU waits, by name: the DataLoader handing out a batch.
DATALOADER_NAME = CaseBlind(r"DataLoader|_DataLoaderIter|dataloader")

# An object's address in a Python frame's name (`<built-in method copy_ of Tensor object at
# 0x7f3a...>`): different in every run.
OBJECT_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
# Kineto's own thread label, "thread 1234 (python3)": the id and the name.
KINETO_THREAD = re.compile(r"^thread (\d+) \((.*)\)$")
# Kineto's 2021 writer put stream lanes on string tids such as "stream 7".
STREAM_TID = re.compile(r"^stream\s*(\d+)$", re.IGNORECASE)


def is_device_category(cat: str) -> bool:
    """Whether a slice of this category runs on a device stream."""
    return cat.lower() in DEVICE_CATEGORIES


def is_gpu_work_category(cat: str) -> bool:
    """Whether a slice of this category is work a device ran (not an annotation or a sync)."""
    return cat.lower() in GPU_WORK_CATEGORIES


def is_runtime_category(cat: str) -> bool:
    """Whether a slice of this category is a host call into the GPU runtime or driver."""
    return cat.lower() in RUNTIME_CATEGORIES


# Kineto's bookkeeping, drawn last: its "Spans" and "Traces" processes, the profiler's own
# threads and span lanes.
BOOKKEEPING_NAME = re.compile(r"^(Spans|Traces)$|Buffer Flush|PyTorch Profiler")

# torch.compile's regions: the autograd engine's `evaluate_function: CompiledFunctionBackward`
# wrapper is not one, as it also runs the eager work around the compiled backward (gradient
# accumulation, say).
COMPILED_REGION = re.compile(
    r"^(Torch-Compiled Region: \S+|## Call CompiledFxGraph \S+ ##|CompiledFunction(Backward)?)$"
)
# A replay of a captured CUDA/HIP graph.
GRAPH_LAUNCH = re.compile(r"^(cuda|hip|cu)GraphLaunch(_v\d+|_ptsz)?$")
# The collective a kernel (ncclDevKernel_AllReduce_...) or an annotation (nccl:all_reduce) runs.
COLLECTIVE_KERNEL_KIND = re.compile(
    r"(?:nccl|rccl)(?:Dev)?Kernel_([A-Za-z]+?)(?:_|\(|$)", re.IGNORECASE
)
COLLECTIVE_ANNOTATION_KIND = re.compile(r"^(?:nccl|rccl|gloo):(.+)$")
# The collective any other communication kernel or op runs, by the words in its name.
COLLECTIVE_NAME_KIND = re.compile(
    r"(all_?reduce|cross_device_reduce|quickreduce|all_?gather|reduce_?scatter|all_?to_?all"
    r"|broadcast|dispatch|combine)",
    re.IGNORECASE,
)
# with_stack=True names an nn.Module's frame `nn.Module: Linear_91`, numbering a class's
# instances.
MODULE_PREFIX = "nn.Module: "
MODULE_INSTANCE = re.compile(r"_\d+$")

# An Itanium-mangled C++ name (`_ZN5aiter...`): a kernel as HIP and some libraries record it.
MANGLED_NAME = re.compile(r"_{1,2}Z[A-Z0-9]")

# A serving engine's iteration, as vLLM's detailed annotation (and SGLang's TraceLens mode) names
# it: `execute_<tokens>_context_<n>(sq..sk..sqsq..sqsk..)_generation_<m>(sq..sk..sqsq..sqsk..)`,
# the prefill (context) and decode (generation) requests' sums of query tokens (sq), KV lengths
# with the cache (sk), sq squared and sq times sk: what the KV lengths of its attention are.
SERVING_ITERATION = re.compile(
    r"^execute_\d+_context_\d+\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)"
    r"_generation_\d+\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)"
)

# Copies that cross PCIe or NVLink (Kineto's "Memcpy HtoD (Pinned -> Device)", HIP's names).
HOST_COPY = re.compile(r"\b(HtoD|DtoH|HtoH|PtoP)\b|HostToDevice|DeviceToHost|HostToHost|PeerToPeer")
