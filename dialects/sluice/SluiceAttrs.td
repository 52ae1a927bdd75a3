//===- SluiceAttrs.td - sluice attributes ------------------*- tablegen -*-===//

#ifndef SLUICE_ATTRS_TD
#define SLUICE_ATTRS_TD

include "dialects/sluice/SluiceDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Sluice_ReduceKind : I32EnumAttr<"ReduceKind", "how a reduction combines elements", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"max", 1>]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}
def Sluice_ReduceKindAttr : EnumAttr<Sluice_Dialect, Sluice_ReduceKind, "reduce_kind"> {
  let assemblyFormat = "$value";
}

def Sluice_Phase : I32EnumAttr<"Phase", "which pass of a training step a graph runs in", [
    I32EnumAttrCase<"forward", 0>,
    I32EnumAttrCase<"backward", 1>]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}
def Sluice_PhaseAttr : EnumAttr<Sluice_Dialect, Sluice_Phase, "phase"> {
  let assemblyFormat = "$value";
}

def Sluice_KernelKind : I32EnumAttr<"KernelKind", "what runs a kernel", [
    I32EnumAttrCase<"fused", 0>,
    I32EnumAttrCase<"gemm", 1>]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}
def Sluice_KernelKindAttr : EnumAttr<Sluice_Dialect, Sluice_KernelKind, "kernel_kind"> {
  let assemblyFormat = "$value";
}

#endif // SLUICE_ATTRS_TD
