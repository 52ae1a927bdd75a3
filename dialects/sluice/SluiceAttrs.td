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

def Sluice_Epilogue : I32EnumAttr<"Epilogue", "what a library contraction applies to its product", [
    I32EnumAttrCase<"bias", 0>,
    I32EnumAttrCase<"relu", 1>,
    I32EnumAttrCase<"gelu", 2>,
    I32EnumAttrCase<"bias_relu", 3>,
    I32EnumAttrCase<"bias_gelu", 4>,
    I32EnumAttrCase<"bgrada", 5>,
    I32EnumAttrCase<"bgradb", 6>]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}
def Sluice_EpilogueAttr : EnumAttr<Sluice_Dialect, Sluice_Epilogue, "epilogue"> {
  let assemblyFormat = "$value";
}

// Pass options (typed: the option parser accepts exactly these spellings).

def Sluice_ComputeType : I32EnumAttr<"ComputeType", "the float type map bodies compute in", [
    I32EnumAttrCase<"f32", 0>,
    I32EnumAttrCase<"f64", 1>]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}

def Sluice_MaskPolicy : I32EnumAttr<"MaskPolicy", "where dropout keep-masks live between forward and backward", [
    I32EnumAttrCase<"Auto", 0, "auto">,
    I32EnumAttrCase<"Regenerate", 1, "regenerate">,
    I32EnumAttrCase<"Bitpack", 2, "bitpack">]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}

#endif // SLUICE_ATTRS_TD
