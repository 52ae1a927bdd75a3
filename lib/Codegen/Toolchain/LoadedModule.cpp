//===- LoadedModule.cpp - a compiled module opened with dlopen ------------===//

#include "sluice/Codegen/LoadedModule.h"

#include "sluice/Runtime/sluice_runtime.h"

#include "llvm/ADT/Twine.h"

#include <dlfcn.h>

using namespace llvm;

/// The descriptor every module exports. The entry points are called through
/// pointers of exactly the modules' own types (UBSan's -fsanitize=function
/// checks this when a module is built with clang and the sanitizers).
using TensorInfoABI = sluice_tensor_info;

struct mlir::sluice::LoadedModule::EntryPoints {
  const char *(*moduleName)();
  int (*numPhases)();
  int (*numTensors)(int);
  const TensorInfoABI *(*tensor)(int, int);
  int (*create)(void **);
  void (*destroy)(void *);
  const char *(*lastError)(const void *);
  int (*run)(void *, int, void *const *, uint64_t, void *);
  /// ABI version 2 (null in older modules).
  int (*abiVersion)() = nullptr;
  uint64_t (*savedBytes)() = nullptr;
  uint64_t (*scratchBytes)() = nullptr;
  int (*createShared)(void **, void *, uint64_t) = nullptr;
};

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// The name of a sluice_runtime.h status code.
static std::string statusName(int status) {
  switch (status) {
  case 1:
    return "SLUICE_ERROR_CUDA";
  case 2:
    return "SLUICE_ERROR_CUBLAS";
  case 3:
    return "SLUICE_ERROR_ALLOC";
  case 4:
    return "SLUICE_ERROR_ARGUMENT";
  case 5:
    return "SLUICE_ERROR_UNSUPPORTED";
  default:
    return "status " + std::to_string(status);
  }
}

namespace mlir::sluice {

unsigned getByteWidth(ModuleDType dtype) {
  return dtype == ModuleDType::F32 ? 4 : 2;
}

StringRef stringifyModuleDType(ModuleDType dtype) {
  switch (dtype) {
  case ModuleDType::F32:
    return "f32";
  case ModuleDType::F16:
    return "f16";
  case ModuleDType::BF16:
    return "bf16";
  }
  return "?";
}

int64_t ModuleTensor::getNumElements() const {
  int64_t count = 1;
  for (int64_t size : dims)
    count *= size;
  return count;
}

void *LoadedModule::lookup(StringRef symbol) const {
  return handle ? dlsym(handle, symbol.str().c_str()) : nullptr;
}

/// "a CUDA module (lib<name>.so)" or "a CPU module (lib<name>_cpu.so)".
static StringRef describeKind(ModuleKind kind) {
  return kind == ModuleKind::Cuda ? "a CUDA module (lib<name>.so)"
                                  : "a CPU module (lib<name>_cpu.so)";
}

/// The error for a module of kind `found` where `expected` is needed.
static Error wrongKind(StringRef path, ModuleKind found, ModuleKind expected) {
  return makeError("module '" + path + "' is " + describeKind(found) +
                   ", but this run needs " + describeKind(expected));
}

Error LoadedModule::resolveVersion2(LoadedModule &module, EntryPoints &entry) {
  entry.abiVersion =
      reinterpret_cast<int (*)()>(module.lookup("sluice_abi_version"));
  if (!entry.abiVersion)
    return Error::success();
  int version = entry.abiVersion();
  if (version != SLUICE_ABI_VERSION)
    return makeError("module '" + module.getPath() + "' has C ABI version " +
                     Twine(version) + "; this build reads version " +
                     Twine(SLUICE_ABI_VERSION) + " (recompile the module)");
  entry.savedBytes =
      reinterpret_cast<uint64_t (*)()>(module.lookup("sluice_saved_bytes"));
  entry.scratchBytes =
      reinterpret_cast<uint64_t (*)()>(module.lookup("sluice_scratch_bytes"));
  entry.createShared = reinterpret_cast<int (*)(void **, void *, uint64_t)>(
      module.lookup("sluice_create_shared"));
  if (!entry.savedBytes || !entry.scratchBytes || !entry.createShared)
    return makeError("module '" + module.getPath() +
                     "' has C ABI version 2 but not all of its entry points "
                     "(sluice_saved_bytes, sluice_scratch_bytes, "
                     "sluice_create_shared)");
  return Error::success();
}

Expected<std::unique_ptr<LoadedModule>>
LoadedModule::load(StringRef path, ModuleKind expected) {
  std::unique_ptr<LoadedModule> module(new LoadedModule());
  module->path = path.str();
  // RTLD_LOCAL: two modules (or a module and the CUDA one) may export the
  // same generic names. RTLD_NODELETE: an OpenMP module leaves libgomp's
  // worker threads behind, which crash if dlclose unmaps the library.
  module->handle =
      dlopen(module->path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!module->handle) {
    const char *reason = dlerror();
    // A CUDA module on a machine without the CUDA libraries.
    if (expected == ModuleKind::Cpu && reason &&
        (StringRef(reason).contains("libcublas") ||
         StringRef(reason).contains("libcudart")))
      return wrongKind(path, ModuleKind::Cuda, expected);
    return makeError("cannot load module '" + path +
                     "': " + (reason ? reason : "dlopen failed"));
  }
  // A CUDA module links cuBLAS; dlsym on the handle searches its
  // dependencies too. Checked before sluice_create runs any of its code.
  ModuleKind found =
      module->lookup("cublasCreate_v2") ? ModuleKind::Cuda : ModuleKind::Cpu;
  if (expected != ModuleKind::Any && found != expected)
    return wrongKind(path, found, expected);
  auto entry = std::make_unique<EntryPoints>();
  auto resolve = [&](auto &slot, const char *symbol) -> Error {
    void *address = module->lookup(symbol);
    if (!address)
      return makeError("module '" + path + "' does not export '" + symbol +
                       "': not a sluicec module");
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(address);
    return Error::success();
  };
  if (Error error = resolve(entry->moduleName, "sluice_module_name"))
    return std::move(error);
  if (Error error = resolve(entry->numPhases, "sluice_num_phases"))
    return std::move(error);
  if (Error error = resolve(entry->numTensors, "sluice_num_tensors"))
    return std::move(error);
  if (Error error = resolve(entry->tensor, "sluice_tensor"))
    return std::move(error);
  if (Error error = resolve(entry->create, "sluice_create"))
    return std::move(error);
  if (Error error = resolve(entry->destroy, "sluice_destroy"))
    return std::move(error);
  if (Error error = resolve(entry->lastError, "sluice_last_error"))
    return std::move(error);
  if (Error error = resolve(entry->run, "sluice_run"))
    return std::move(error);
  if (Error error = resolveVersion2(*module, *entry))
    return std::move(error);
  module->entry = std::move(entry);
  EntryPoints &abi = *module->entry;

  const char *name = abi.moduleName();
  module->name = name ? name : "";
  int numPhases = abi.numPhases();
  if (numPhases != 1 && numPhases != 2)
    return makeError("module '" + path + "' declares " + Twine(numPhases) +
                     " phases; expected 1 (inference) or 2 (training)");
  for (int phase = 0; phase < numPhases; ++phase) {
    std::vector<ModuleTensor> &tensors = module->phases.emplace_back();
    int count = abi.numTensors(phase);
    if (count < 0)
      return makeError("module '" + path + "' declares " + Twine(count) +
                       " tensors in phase " + Twine(phase));
    for (int index = 0; index < count; ++index) {
      const TensorInfoABI *info = abi.tensor(phase, index);
      std::string where = ("module '" + path + "': tensor " + Twine(index) +
                           " of phase " + Twine(phase))
                              .str();
      if (!info || !info->name)
        return makeError(where + " has no description");
      if (info->dtype < 0 || info->dtype > 2)
        return makeError(where + " ('" + info->name + "') has dtype code " +
                         Twine(info->dtype) + "; expected 0, 1 or 2");
      if (info->rank < 0 || (info->rank > 0 && !info->dims))
        return makeError(where + " ('" + info->name + "') has no valid dims");
      ModuleTensor tensor;
      tensor.name = info->name;
      tensor.dtype = static_cast<ModuleDType>(info->dtype);
      tensor.dims.assign(info->dims, info->dims + info->rank);
      tensor.isOutput = info->is_output != 0;
      for (int64_t size : tensor.dims)
        if (size <= 0)
          return makeError(where + " ('" + tensor.name +
                           "') has a non-positive size");
      tensors.push_back(std::move(tensor));
    }
  }

  void *context = nullptr;
  int status = abi.create(&context);
  if (status != 0 || !context) {
    std::string detail =
        context ? abi.lastError(context) : std::string("no context");
    if (context)
      abi.destroy(context);
    return makeError("module '" + path + "': sluice_create failed with " +
                     statusName(status) + ": " + detail);
  }
  module->context = context;
  if (abi.abiVersion) {
    module->abiVersion = abi.abiVersion();
    module->savedBytes = abi.savedBytes();
    module->scratchBytes = abi.scratchBytes();
  }
  return std::move(module);
}

Error LoadedModule::useSharedScratch(void *scratch, uint64_t bytes) {
  if (!entry->createShared)
    return makeError("module '" + path +
                     "' has C ABI version 1: its contexts cannot share a "
                     "scratch region (recompile it)");
  void *shared = nullptr;
  int status = entry->createShared(&shared, scratch, bytes);
  if (status != 0 || !shared) {
    std::string detail =
        shared ? entry->lastError(shared) : std::string("no context");
    if (shared)
      entry->destroy(shared);
    return makeError("module '" + path +
                     "': sluice_create_shared failed with " +
                     statusName(status) + ": " + detail);
  }
  entry->destroy(context);
  context = shared;
  return Error::success();
}

LoadedModule::~LoadedModule() {
  if (context && entry)
    entry->destroy(context);
  if (handle)
    dlclose(handle);
}

Error LoadedModule::run(unsigned phase, ArrayRef<void *> tensors, uint64_t seed,
                        void *stream) {
  if (phase >= phases.size())
    return makeError("module '" + name + "' has no phase " + Twine(phase));
  if (tensors.size() != phases[phase].size())
    return makeError("module '" + name + "' phase " + Twine(phase) + " takes " +
                     Twine(phases[phase].size()) + " tensors, given " +
                     Twine(tensors.size()));
  int status = entry->run(context, static_cast<int>(phase), tensors.data(),
                          seed, stream);
  if (status == 0)
    return Error::success();
  const char *detail = entry->lastError(context);
  return makeError("module '" + name + "' " +
                   (phase == 0 ? "forward" : "backward") + " failed with " +
                   statusName(status) + ": " + (detail ? detail : ""));
}

} // namespace mlir::sluice
