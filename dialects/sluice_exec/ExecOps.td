//===- ExecOps.td - sluice_exec operations -----------------*- tablegen -*-===//

#ifndef SLUICE_EXEC_OPS_TD
#define SLUICE_EXEC_OPS_TD

include "dialects/sluice_exec/ExecDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Exec_EntryOp : Exec_Op<"entry", [Symbol, NoTerminator, SingleBlock,
                                     IsolatedFromAbove]> {
  let summary = "the statements of one entry point (forward or backward)";
  let description = [{
    Holds the ops one entry point of the module runs, in order. The
    printers print its body; the context fields, create and destroy code
    that ops in it need (cuBLASLt descriptors) go to their own sections.

    ```mlir
    sluice_exec.entry @tiny_forward {
      %x = sluice_exec.arg "x"
      %t = sluice_exec.arena 256
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
}

def Exec_ArgOp : Exec_Op<"arg", [Pure]> {
  let summary = "a boundary tensor: a field of the entry point's args struct";
  let description = [{
    `field` names the field (`args->x`). The lowering records the tensor's
    name (`ln1.scale`); --sluice-legalize-for-emission turns it into the C
    identifier of the field (`ln1_scale`), and the printers refuse anything
    else.
  }];
  let arguments = (ins StrAttr:$field);
  let results = (outs Exec_PtrType:$ptr);
  let assemblyFormat = "$field attr-dict";
}

def Exec_ArenaOp : Exec_Op<"arena", [Pure]> {
  let summary = "a view of the scratch region at a byte offset from the memory plan";
  let description = [{
    The scratch region (`ctx->arena`) holds what one entry point uses and
    leaves dead: the memory plan's scratch buffers at their offsets, then
    the product of a GEMM that nothing stores (`sluice_exec.scratch`) and,
    on CUDA, the cuBLASLt workspace. Contexts that never run at the same
    time may share one scratch region (`sluice_create_shared`,
    docs/Codegen.md).

    ```mlir
    %t = sluice_exec.arena 256   // (ctx->arena + 256ULL)
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$offset);
  let results = (outs Exec_PtrType:$ptr);
  let assemblyFormat = "$offset attr-dict";
}

def Exec_ScratchOp : Exec_Op<"scratch", [Pure]> {
  let summary = "a GEMM's C that nothing stores (in the scratch region, after the plan's buffers)";
  let results = (outs Exec_PtrType:$ptr);
  let assemblyFormat = "attr-dict";
}

def Exec_SavedOp : Exec_Op<"saved", [Pure]> {
  let summary = "a view of the saved region at a byte offset from the memory plan";
  let description = [{
    A tensor the forward keeps for its backward. Every context has a saved
    region of its own, so it holds one forward's tensors until its backward.

    ```mlir
    %s = sluice_exec.saved 0     // (ctx->saved + 0ULL)
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$offset);
  let results = (outs Exec_PtrType:$ptr);
  let assemblyFormat = "$offset attr-dict";
}

def Exec_GemmOp : Exec_Op<"gemm", [AttrSizedOperandSegments, NoTerminator,
                                    SingleBlock]> {
  let summary = "one column-major strided-batched GEMM through the BLAS";
  let description = [{
    C[m, n] = alpha * op(A)[m, k] * op(B)[k, n] + beta * C[m, n] (`beta`
    0, the default, or 1: a GEMM accumulating into C), repeated over
    `batch_count` with element strides between batches: exactly the
    cuBLAS `cublasGemmStridedBatchedEx` / cuBLASLt / `sluice_cpu_gemm`
    parameters, taken from the contraction's GemmMapping. A `epilogue`
    other than `none` is folded by cuBLASLt (`bias` is the bias vector for
    the bias epilogues, and the bias gradient `dgelu_bgrad` writes, and
    `bgrada` / `bgradb` the sum of A / B over k, m / n elements; `aux`,
    for `bias_gelu_aux`, the matrix that gets the biased product before the
    gelu, for `dgelu` and `dgelu_bgrad` the saved pre-activation at which
    the gelu's derivative is taken, laid out as C: leading dimension
    `ldc` and batch stride `stride_c`, which cuBLASLt needs to be multiples
    of 8 elements); `descriptor` numbers its matmul and layout
    descriptors in the context (assigned by --sluice-legalize-for-emission,
    required by the CUDA printer). `label` names the kernel in messages.

    A GEMM with an epilogue may carry a `fallback` region: the same work
    without the library epilogue, for where cuBLASLt refuses the epilogue
    at run time. It holds pointer ops, then exactly one `sluice_exec.gemm`
    with epilogue `none` and no fallback of its own (the same BLAS
    parameters: A, B, transposes, sizes, leading dimensions, strides,
    alpha, beta and types; its C may differ, the scratch product), then
    at least one `sluice_exec.launch` (the generated kernels that do what
    the epilogue did). The CUDA printer runs the folded call where
    create's heuristic found an algorithm for it and the pointers are
    16-byte aligned, the fallback otherwise, and, for a GEMM with beta 0,
    also when that call reports CUBLAS_STATUS_NOT_SUPPORTED
    (docs/Codegen.md, "Epilogue fallback"). The lowering gives every
    folded epilogue one.

    ```mlir
    sluice_exec.gemm %w * %x -> %h bias %b {label = "kernel 'ffn1'",
        trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<t>,
        m = 40, n = 16, k = 6, lda = 40, ldb = 16, ldc = 40,
        batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0,
        alpha = 1.0, a_type = f32, b_type = f32, c_type = f32,
        compute = #sluice_exec.compute<f32>,
        epilogue = #sluice_exec.epilogue<bias_gelu>, descriptor = 0}
        fallback {
      sluice_exec.gemm %w * %x -> %h {label = "kernel 'ffn1'", ...,
          epilogue = #sluice_exec.epilogue<none>, descriptor = 1}
      sluice_exec.launch @sluice_fallback_0_ffn1_epilogue schedule <...>
          (%h, %b) -> (%h) {...}
    }
    ```
  }];
  let arguments = (ins Exec_PtrType:$a, Exec_PtrType:$b, Exec_PtrType:$c,
                       Optional<Exec_PtrType>:$bias,
                       Optional<Exec_PtrType>:$aux,
                       StrAttr:$label,
                       Exec_BlasOpAttr:$trans_a, Exec_BlasOpAttr:$trans_b,
                       I64Attr:$m, I64Attr:$n, I64Attr:$k,
                       I64Attr:$lda, I64Attr:$ldb, I64Attr:$ldc,
                       I64Attr:$batch_count,
                       I64Attr:$stride_a, I64Attr:$stride_b, I64Attr:$stride_c,
                       F64Attr:$alpha,
                       DefaultValuedAttr<F64Attr, "0.0">:$beta,
                       TypeAttr:$a_type, TypeAttr:$b_type, TypeAttr:$c_type,
                       Exec_ComputeTypeAttr:$compute,
                       Exec_BlasEpilogueAttr:$epilogue,
                       OptionalAttr<I64Attr>:$descriptor);
  let regions = (region MaxSizedRegion<1>:$fallback);
  let assemblyFormat = [{
    $a `*` $b `->` $c (`bias` $bias^)? (`aux` $aux^)? attr-dict
    (`fallback` $fallback^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True when the epilogue reads the bias vector.
    bool hasBiasEpilogue();
    /// The verifier's rules for the fallback region.
    LogicalResult verifyFallback();
  }];
}

def Exec_LaunchOp : Exec_Op<"launch", [AttrSizedOperandSegments]> {
  let summary = "one run of a generated kernel function";
  let description = [{
    Calls the kernel function `kernel` (a `__global__` function on CUDA, a
    host function in C++), generated for `schedule`, with the input
    pointers, then the output
    pointers, then the dropout seed. `input_types` / `output_types` give
    each pointer's element type as the kernel reads it: f32, f16, bf16, or
    i1 for a bit-packed mask (32-bit words, bit e % 32 of word e / 32).
    The kernel or-s a mask's bits in, so every i1 output is zeroed first:
    `clear_bytes` gives, per output, the bytes to zero (whole words; 0 for
    the other outputs). On CUDA it launches the schedule's `grid` blocks of `threads`
    threads on the stream and checks the launch; `label` names the kernel
    in a comment and in that check.

    ```mlir
    sluice_exec.launch @sluice_kernel_0_ln schedule <
        mode = row_block, reduction = warp, grid = 6, threads = 32,
        vector = 4, elements_per_thread = 4, outer = ["b", "j"],
        inner = ["i"]> (%x, %g) -> (%y, %m) {input_types = [f32, f32],
        output_types = [f32, i1], clear_bytes = array<i64: 0, 4>,
        label = "kernel 'ln' (fused: ln)"}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel,
                       Exec_ScheduleAttr:$schedule,
                       Variadic<Exec_PtrType>:$inputs,
                       Variadic<Exec_PtrType>:$outputs,
                       TypeArrayAttr:$input_types,
                       TypeArrayAttr:$output_types,
                       DenseI64ArrayAttr:$clear_bytes,
                       StrAttr:$label);
  let assemblyFormat = [{
    $kernel `schedule` $schedule ` ` `(` $inputs `)` `->` `(` $outputs `)`
    attr-dict
  }];
  let hasVerifier = 1;
}

def Exec_CopyOp : Exec_Op<"copy"> {
  let summary = "copy `bytes` bytes (an output that aliases another value)";
  let description = [{
    On CUDA an asynchronous device-to-device copy on the stream, checked;
    in C++ a memcpy.
  }];
  let arguments = (ins Exec_PtrType:$source, Exec_PtrType:$target,
                       ConfinedAttr<I64Attr, [IntPositive]>:$bytes);
  let assemblyFormat = "$source `->` $target `bytes` $bytes attr-dict";
}

class Exec_TimerOp<string mnemonic, string edge>
    : Exec_Op<mnemonic> {
  let summary = "the " # edge # " of a timed kernel (-DSLUICE_PROFILE only)";
  let description = [{
    Expands `SLUICE_PROFILE_}] # !toupper(edge) # [{(phase, slot)`
    (include/sluice/Runtime/sluice_host.h): nothing unless the module is
    compiled with -DSLUICE_PROFILE.
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$phase,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$slot);
  let assemblyFormat = "$phase `,` $slot attr-dict";
}
def Exec_TimerBeginOp : Exec_TimerOp<"timer_begin", "begin">;
def Exec_TimerEndOp : Exec_TimerOp<"timer_end", "end">;

def Exec_AttentionOp : Exec_Op<"attention", [AttrSizedOperandSegments]> {
  let summary = "a streaming attention kernel of the runtime";
  let description = [{
    One call of the streaming (online-softmax) attention kernels of
    include/sluice/Runtime/sluice_stream*.h, the lowering of a
    `kind = streaming` sluice.kernel. Per slice (one point of the `batch`
    dims), S = `scale` * Q K^T (m x n, contracted over d), keys after the
    query masked when `causal`, P = softmax(S), dropout with probability
    `dropout` drawn from the run's seed and `stream` at counter
    `counter . (batch..., i, j)`, O = P V (m x e). Forward: inputs (Q, K,
    V), outputs (O) or (O, LSE). Backward (`backward`): inputs (Q, K, V, dO,
    LSE, D), outputs (dQ, dK, dV); with `row_dot_from_o` the sixth input is
    O (elements and strides roles like dO's) and the kernels compute
    D = rowsum(dO * O) themselves. `strides` gives, per pointer (inputs,
    then outputs), the element strides of (batch..., row, column) (LSE and D
    have no column: 0), and `offsets` (absent: all 0) the element offset of
    each operand from its pointer (non-zero where the operand is one slice
    of a stacked tensor: Q, K and V of one stacked projection). `element` is Q's element type; LSE and D are f32.
    The last `group` batch dims (default 0) are query-only (grouped- or
    multi-query attention): K, V, dK and dV have stride 0 along them and
    the backward sums dK and dV over them.
    `tiles` are the kernel's tiles; `label` names it in messages.

    ```mlir
    sluice_exec.attention (%q, %k, %v) -> (%o, %lse) {label = "kernel 'attn'",
        element = f16, batch = array<i64: 2, 4>, m = 7, n = 7, d = 16, e = 16,
        strides = [array<i64: 448, 16, 64, 1>, ...], counter = array<i64: 196, 49, 7, 1>,
        scale = 0.25, causal = false, dropout = 0.1, stream = 1,
        tiles = #sluice_exec.stream_tiles<...>}
    ```
  }];
  let arguments = (ins Variadic<Exec_PtrType>:$inputs,
                       Variadic<Exec_PtrType>:$outputs,
                       UnitAttr:$backward,
                       UnitAttr:$row_dot_from_o,
                       TypeAttr:$element,
                       DenseI64ArrayAttr:$batch,
                       DefaultValuedAttr<I64Attr, "0">:$group,
                       I64Attr:$m, I64Attr:$n, I64Attr:$d, I64Attr:$e,
                       ArrayAttr:$strides,
                       DenseI64ArrayAttr:$counter,
                       F64Attr:$scale,
                       BoolAttr:$causal,
                       F64Attr:$dropout,
                       I64Attr:$stream,
                       Exec_StreamTilesAttr:$tiles,
                       StrAttr:$label,
                       OptionalAttr<DenseI64ArrayAttr>:$offsets);
  let assemblyFormat = [{
    `(` $inputs `)` `->` `(` $outputs `)` attr-dict
  }];
  let hasVerifier = 1;
}

#endif // SLUICE_EXEC_OPS_TD
