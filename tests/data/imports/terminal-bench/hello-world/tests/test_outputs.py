import os
from pathlib import Path

APP = Path(os.environ.get("APP_DIR", "/app"))


def test_hello_file_exists():
    assert (APP / "hello.txt").exists()


def test_hello_file_content():
    assert (APP / "hello.txt").read_text().strip() == "Hello, world!"


if __name__ == "__main__":
    test_hello_file_exists()
    test_hello_file_content()
