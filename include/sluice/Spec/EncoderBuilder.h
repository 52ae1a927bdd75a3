//===- EncoderBuilder.h - layer spec to sluice graph ------------*- C++ -*-===//

#ifndef SLUICE_SPEC_ENCODERBUILDER_H
#define SLUICE_SPEC_ENCODERBUILDER_H

#include "sluice/Spec/LayerSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::sluice {

/// Builds the forward graph of an encoder layer as a module holding one
/// `sluice.graph` named after the spec, with the canonical boundary names
/// (x, wq, bq, …, y) and PyTorch semantics (docs/SpecFormat.md). The module
/// carries the spec's target and name as attributes. Returns null and emits
/// an error at `loc` if the graph fails to verify.
mlir::OwningOpRef<mlir::ModuleOp> buildEncoderGraph(mlir::MLIRContext &context,
                                                    const LayerSpec &spec,
                                                    mlir::Location loc);

} // namespace mlir::sluice

#endif // SLUICE_SPEC_ENCODERBUILDER_H
