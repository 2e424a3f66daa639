// Files in and out, the one way every command reads an input file and writes an output file.
//
// Input: a regular file (or a FIFO, read to its end) of at most a stated size; a folder, a
// device or a socket is refused before anything is read, with one line naming the file.
// Output: a regular file or an absent name is written to a temporary file in the same folder
// and renamed over it, so the name holds its old contents or all of the new ones, never a
// part (a full disk or a file-size limit leaves the old file and no temporary one); a
// symbolic link is followed and its target replaced the same way; a character device or a
// FIFO (/dev/stdout, /dev/null, a pipe) is written through, and a failed write of it is an
// error; a folder, a block device or a socket is refused.
#pragma once

#include <cstdint>
#include <string>

#include "traces/status.h"

namespace autotune {

// Reads the whole of path into *text. `what` names the file's role in errors ("timeline",
// "config file"); errors are one line: "cannot read WHAT PATH: REASON" (no such file, is a
// directory, is a character device, larger than the limit of N MiB, ...).
Status ReadInputFile(const std::string& path, const std::string& what, int64_t max_bytes,
                     std::string* text);

// Writes text to path as the header says. Errors are one line "cannot write PATH: REASON"
// and leave no partial file behind.
Status WriteOutputFile(const std::string& path, const std::string& text);

// text with every byte that is not printable UTF-8 (control bytes, invalid sequences)
// written as \xNN, so that an echo of outside input stays one line of valid UTF-8.
std::string EscapeForTerminal(const std::string& text);

}  // namespace autotune
