"""Framework-independent controller machinery shared by every job kind."""
