//===- EmitPasses.td - passes of code generation -----------*- tablegen -*-===//

#ifndef SLUICE_CODEGEN_EMIT_PASSES_TD
#define SLUICE_CODEGEN_EMIT_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerToExec : Pass<"sluice-lower-to-exec", "::mlir::ModuleOp"> {
  let summary = "Lower a fused module to sluice_exec entry points (for reading)";
  let description = [{
    Runs the lowering `sluicec` prints from (`lowerToExec`,
    include/sluice/Codegen/Emit.h) and appends its result to the module:
    one `sluice_exec.entry` per phase, with every pointer (args field,
    arena offset from the memory plan, scratch), launch (grid, threads,
    element types, packed-mask clears), GEMM (BLAS parameters, the epilogue
    cuBLASLt folds), copy and timer. The graphs stay as they were; the
    generated kernel functions the launches name are not IR.

    Before (after --sluice-fuse):
    ```mlir
    sluice.graph @g_forward(%x: ...) -> ... {
      %0 = sluice.kernel fused (%x) {...} { ... }
      sluice.return %0 : ...
    }
    ```
    After:
    ```mlir
    sluice.graph @g_forward ... (unchanged)
    sluice_exec.entry @sluice_g_forward {
      %0 = sluice_exec.arg "x"
      %1 = sluice_exec.arg "y"
      sluice_exec.timer_begin 0, 0
      sluice_exec.launch @sluice_kernel_0_k0 grid 1 threads 256 (%0) -> (%1) {...}
      sluice_exec.timer_end 0, 0
    }
    ```
  }];
  let options = [
    Option<"target", "target", "::mlir::sluice::EmitTarget",
           "::mlir::sluice::EmitTarget::Cuda",
           "the backend: cuda (cuBLAS / cuBLASLt) or cpp (portable C++)",
           [{::llvm::cl::values(
               clEnumValN(::mlir::sluice::EmitTarget::Cuda, "cuda", "CUDA"),
               clEnumValN(::mlir::sluice::EmitTarget::Cpu, "cpp",
                          "portable C++"))}]>
  ];
  let dependentDialects = ["::mlir::sluice::exec::ExecDialect"];
}

#endif // SLUICE_CODEGEN_EMIT_PASSES_TD
