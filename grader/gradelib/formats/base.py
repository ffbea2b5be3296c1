"""What a format is (every format module defines FORMAT, one of these; the package registers them)."""
from dataclasses import dataclass
from typing import Callable, Optional


@dataclass(frozen=True)
class Format:
    """name: the --format value; help: one line for --help; render(result, colour=False) -> text;
    side_file: in batch mode, the extension of the student's side file written in this format
    (<student>.<side_file>) beside the JSON result, or None; colour: render can colour its text."""
    name: str
    help: str
    render: Callable
    side_file: Optional[str] = None
    colour: bool = False
