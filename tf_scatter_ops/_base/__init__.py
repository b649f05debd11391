"""What the rest of the package stands on; see README.md here."""
