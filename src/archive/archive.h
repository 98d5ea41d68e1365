// Archive: what export and import need of the core (design.md, "Archives").
//
// The tar container, its entries and the manifest live in JS (js/archive.js,
// docs/formats.md "Archive"); the core gives the rows of a table as lines in
// the fingerprint's row encoding, each table's digest, and writes a restored
// store: its tables, its rows and its retained outbox with the head, exactly
// as the archive holds them, without taking seqs of its own.
#ifndef ONESTORE_ARCHIVE_ARCHIVE_H_
#define ONESTORE_ARCHIVE_ARCHIVE_H_

#include <cstdint>
#include <string>

#include "commit/store.h"
#include "onestore/status.h"

namespace onestore {

class Archiver {
 public:
  explicit Archiver(Store* store) : store_(store) {}

  // Export. Up to `limit` rows of `table` in key order after `cursor` (""
  // for the first page), each as one line "[v1,v2,...]\n" in column order
  // (the fingerprint's row encoding, src/sync/fingerprint.h). *next is the
  // cursor of the next page, "" after the last one.
  Status RowLines(const std::string& table, const std::string& cursor, int64_t limit,
                  std::string* lines, std::string* next);

  // Import, into a new store only (head 0, no tables): the steps below, in
  // this order, each in its own backend transaction. A new store that failed
  // half way is thrown away by the caller (it is a new generation).
  //
  // Creates the tables: a JSON array of table records (store.tables()).
  Status RestoreTables(const std::string& tables_json);
  // Puts rows of `table`: lines as RowLines gives them. A line that is not
  // such a row is invalid/archive, naming the table and the line.
  Status RestoreRows(const std::string& table, const std::string& lines);
  // Writes the retained outbox records (one record's JSON text per line, in
  // seq order, the last one at `head`) verbatim and sets the head. With no
  // record, only the head is set (the outbox was trimmed up to it).
  Status RestoreOutbox(const std::string& lines, int64_t head);

 private:
  Status CheckNew(const char* what) const;
  Store* store_;
};

}  // namespace onestore

#endif  // ONESTORE_ARCHIVE_ARCHIVE_H_
