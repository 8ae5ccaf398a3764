"""MLIR plumbing: contexts with the tile dialect loaded, buffer types, op builders."""

from tilemlir.ir.context import make_context, DIALECT_FILE
from tilemlir.ir.types import BufferType, buffer_type, parse_buffer_type, is_buffer_type

__all__ = ["make_context", "DIALECT_FILE", "BufferType", "buffer_type", "parse_buffer_type",
           "is_buffer_type"]
