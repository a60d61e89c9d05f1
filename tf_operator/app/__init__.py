"""The operator process: flags (`options`), CLI (`main`), startup (`server`), `monitoring`."""
