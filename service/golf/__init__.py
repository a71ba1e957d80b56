"""Golf game service: engine, use cases, protobuf facade and transports."""
