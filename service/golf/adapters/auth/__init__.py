"""Bearer tokens at the edge of both transports: signing this service's access tokens, checking every token a
client sends (ours or a trusted portal's) into a ``Caller``, and finding the key that signs ours."""
