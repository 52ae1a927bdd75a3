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
    `field` is the C identifier of the field (`args->x`); the legalization
    before printing guarantees it is one.
  }];
  let arguments = (ins StrAttr:$field);
  let results = (outs Exec_PtrType:$ptr);
  let assemblyFormat = "$field attr-dict";
  let hasVerifier = 1;
}

def Exec_ArenaOp : Exec_Op<"arena", [Pure]> {
  let summary = "a view of the arena at a byte offset from the memory plan";
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$offset);
  let results = (outs Exec_PtrType:$ptr);
  let assemblyFormat = "$offset attr-dict";
}

def Exec_ScratchOp : Exec_Op<"scratch", [Pure]> {
  let summary = "the context's scratch buffer (a GEMM's C that nothing stores)";
  let results = (outs Exec_PtrType:$ptr);
  let assemblyFormat = "attr-dict";
}

def Exec_GemmOp : Exec_Op<"gemm"> {
  let summary = "one column-major strided-batched GEMM through the BLAS";
  let description = [{
    C[m, n] = alpha * op(A)[m, k] * op(B)[k, n] (beta = 0), repeated over
    `batch_count` with element strides between batches: exactly the
    cuBLAS `cublasGemmStridedBatchedEx` / cuBLASLt / `sluice_cpu_gemm`
    parameters, taken from the contraction's GemmMapping. A `epilogue`
    other than `none` is folded by cuBLASLt (`descriptor` numbers its
    matmul and layout descriptors in the context; `bias` is the bias
    vector for the bias epilogues). `label` names the kernel in messages.

    ```mlir
    sluice_exec.gemm %w * %x -> %h bias %b {label = "kernel 'ffn1'",
        trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<t>,
        m = 40, n = 16, k = 6, lda = 40, ldb = 16, ldc = 40,
        batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0,
        alpha = 1.0, a_type = f32, b_type = f32, c_type = f32,
        compute = #sluice_exec.compute<f32>,
        epilogue = #sluice_exec.epilogue<bias_gelu>, descriptor = 0}
    ```
  }];
  let arguments = (ins Exec_PtrType:$a, Exec_PtrType:$b, Exec_PtrType:$c,
                       Optional<Exec_PtrType>:$bias,
                       StrAttr:$label,
                       Exec_BlasOpAttr:$trans_a, Exec_BlasOpAttr:$trans_b,
                       I64Attr:$m, I64Attr:$n, I64Attr:$k,
                       I64Attr:$lda, I64Attr:$ldb, I64Attr:$ldc,
                       I64Attr:$batch_count,
                       I64Attr:$stride_a, I64Attr:$stride_b, I64Attr:$stride_c,
                       F64Attr:$alpha,
                       TypeAttr:$a_type, TypeAttr:$b_type, TypeAttr:$c_type,
                       Exec_ComputeTypeAttr:$compute,
                       Exec_BlasEpilogueAttr:$epilogue,
                       OptionalAttr<I64Attr>:$descriptor);
  let assemblyFormat = [{
    $a `*` $b `->` $c (`bias` $bias^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True when the epilogue reads the bias vector.
    bool hasBiasEpilogue();
  }];
}

#endif // SLUICE_EXEC_OPS_TD
