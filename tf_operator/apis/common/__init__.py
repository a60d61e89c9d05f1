"""Framework-independent job API (shared by TFJob and future job kinds)."""
