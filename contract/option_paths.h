// option_paths.h — the paths that options name, checked before any work: a file a program will
// read exists and can be read, a directory it will read exists, a file it will write can be
// written, a directory it will write into can be made. A run that trains, sweeps or fits for an
// hour and then fails on its output path has lost that hour; these checks cost a few syscalls.
//
// Nothing is left behind: a write check opens the file itself (O_WRONLY, never truncating) when
// it exists, and otherwise creates it and removes it at once; a directory that would have to be
// made is judged by a probe directory made and removed in its nearest existing ancestor. Each
// throws ValueError with a complaint that reads after the option's name ("--trace: cannot
// write 'x': ..."), as the value parsers of option_values.h do.
#pragma once

#include <string>

namespace dpscale {

// A regular file that this process can open for reading.
void check_readable_file(const std::string& path);
// An existing directory that this process can list.
void check_readable_dir(const std::string& path);
// A file this process can write: not a directory, its directory exists, and the file opens for
// writing (or can be created there).
void check_writable_file(const std::string& path);
// A file this process can write once the missing directories above it are made (a sweep's --out).
void check_writable_file_making_dirs(const std::string& path);
// A directory this process can write into, made with its missing parents if need be (plot --out).
void check_writable_dir(const std::string& path);

}  // namespace dpscale
