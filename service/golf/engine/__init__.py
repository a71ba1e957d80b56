"""Pure game rules. Imports the standard library only: no protobuf, no database, no global random."""
