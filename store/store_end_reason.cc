// Store::SetEndReason: why an incomplete run ended.
#include <sqlite3.h>

#include <string>

#include "store/sqlite_statement.h"
#include "store/store.h"

namespace autotune {

Status Store::SetEndReason(int64_t run_id, const std::string& reason) {
  Statement update(db_, "UPDATE runs SET end_reason = ? WHERE id = ? AND end_reason = ''");
  update.Bind(1, reason).Bind(2, run_id);
  AUTOTUNE_RETURN_IF_ERROR(update.Run().WithPrefix(path_));
  if (sqlite3_changes(db_) > 0) return Status::Ok();
  RunInfo exists;  // no change: a reason was stored already, or there is no such run
  return GetRun(run_id, &exists);
}

}  // namespace autotune
