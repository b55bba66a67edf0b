"""What the tests share: servers they start, references they compare with, waiting."""
