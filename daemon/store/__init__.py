"""Storage: DuckDB on one file, one writer thread, every SQL statement in ``repository``.

* :mod:`.connection` opens the file, migrates it (``schema/NNN_*.sql``) and re-derives
  moves a crash left unstored (with the parser it is handed: storage imports nothing of
  ingestion);
* :mod:`.writer` is the single writer thread (group commit of submissions, ad-hoc
  write transactions), with :mod:`.dedupe` (already-stored screen) and :mod:`.moves`
  (the moves rows that follow the acknowledgement);
* :mod:`.database` is the :class:`Store` the daemon holds: the writer and reads;
* :mod:`.repository` holds every statement as a named function.
"""

from .connection import connect, migrations, recover_moves
from .database import Store
from .errors import QueueFull, StoreError, StoreLockedError
from .records import SubmissionRecord, WriteResult, epoch_us
from .writer import Writer

__all__ = ["Store", "Writer", "SubmissionRecord", "WriteResult", "StoreError",
           "StoreLockedError", "QueueFull", "connect", "migrations", "recover_moves",
           "epoch_us"]
