//===- SluiceInterfaces.td - sluice op interfaces ----------*- tablegen -*-===//

#ifndef SLUICE_INTERFACES_TD
#define SLUICE_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Sluice_CompositeOpInterface : OpInterface<"CompositeOpInterface"> {
  let cppNamespace = "::mlir::sluice";
  let description = [{
    A composite op exists for readability and stands for a small graph of
    primitives (map, reduce, contract, random_mask, relayout, rename). The
    decomposition is the composite's definition: the interpreter, the
    accounting and `--sluice-decompose` all go through it.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the primitives this op stands for at the builder's insertion
        point, reading this op's operands, and returns the values that replace
        its results (one per result, same types). Map bodies compute in
        `computeType` (f32 for code generation, f64 for the reference
        interpreter). Does not modify this op.
      }],
      "::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>", "decompose",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::FloatType":$computeType)>,
  ];
}

#endif // SLUICE_INTERFACES_TD
