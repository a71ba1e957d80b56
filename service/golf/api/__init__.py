"""The protobuf facade both transports use: conversions, one handler per RPC, the error table."""
