"""Between a public function and an op; see README.md here."""
