//===- ProfileDatabase.cpp - measured kernel times ------------------------===//

#include "sluice/Analysis/ProfileDatabase.h"

#include "JsonFile.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir::sluice;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;
namespace json = llvm::json;

static llvm::Error profileError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static std::string key(StringRef signature, StringRef layout) {
  return (signature + "\n" + layout).str();
}

std::optional<double> ProfileDatabase::lookup(StringRef signature,
                                              StringRef layout) const {
  auto it = seconds.find(key(signature, layout));
  if (it == seconds.end())
    return std::nullopt;
  return it->second;
}

Expected<ProfileDatabase>
mlir::sluice::parseProfileDatabase(StringRef text, StringRef origin) {
  Expected<json::Value> root = detail::parseJson(text, origin);
  if (!root)
    return root.takeError();
  const json::Object *object = root->getAsObject();
  if (!object)
    return profileError(origin + ": expected an object with 'target' and "
                                 "'kernels'");
  for (const auto &entry : *object)
    if (entry.first != "target" && entry.first != "kernels")
      return profileError(origin + ": field '" + entry.first.str() +
                          "': unknown field; allowed: kernels, target");
  ProfileDatabase database;
  std::optional<StringRef> target = object->getString("target");
  if (!target || target->empty())
    return profileError(origin + ": field 'target': expected the name of "
                                 "the target the times were measured on");
  database.target = target->str();
  const json::Array *kernels = object->getArray("kernels");
  if (!kernels)
    return profileError(origin + ": field 'kernels': expected an array");
  for (auto [index, value] : llvm::enumerate(*kernels)) {
    std::string where =
        (origin + ": kernels[" + Twine(index) + "]").str();
    const json::Object *kernel = value.getAsObject();
    if (!kernel)
      return profileError(where + ": expected an object with signature, "
                                  "layout and us");
    for (const auto &entry : *kernel)
      if (entry.first != "signature" && entry.first != "layout" &&
          entry.first != "us")
        return profileError(where + ": field '" + entry.first.str() +
                            "': unknown field; allowed: layout, signature, us");
    std::optional<StringRef> signature = kernel->getString("signature");
    std::optional<StringRef> layout = kernel->getString("layout");
    std::optional<double> us = kernel->getNumber("us");
    if (!signature || signature->empty())
      return profileError(where + ": field 'signature': expected a string");
    if (!layout || layout->empty())
      return profileError(where + ": field 'layout': expected a string");
    if (!us || !std::isfinite(*us) || *us <= 0)
      return profileError(where + ": field 'us': expected a positive number "
                                  "of microseconds");
    if (!database.seconds.try_emplace(key(*signature, *layout), *us * 1e-6)
             .second)
      return profileError(where + ": a second entry for signature '" +
                          *signature + "' and this layout");
  }
  return database;
}

Expected<ProfileDatabase>
mlir::sluice::loadProfileDatabase(StringRef path, StringRef expectedTarget) {
  Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      detail::readFile(path, "profile database");
  if (!buffer)
    return buffer.takeError();
  Expected<ProfileDatabase> database =
      parseProfileDatabase((*buffer)->getBuffer(), path);
  if (database && database->target != expectedTarget)
    return profileError(path + ": measured on '" + database->target +
                        "' but the target is '" + expectedTarget + "'");
  return database;
}
