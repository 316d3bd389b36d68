"""Neural sentence encoders that run offline, in numpy.

- :mod:`~chunkeval.encoders.models`: which model folder a spec names, and its identity
  (model id, revision, weights digest -- never a path);
- :mod:`~chunkeval.encoders.architecture`: the folder's ``config.json``, weights header and
  vocabulary checked against each other at load;
- :mod:`~chunkeval.encoders.bert`: the forward pass of a BERT-family encoder;
- :mod:`~chunkeval.encoders.embedder`: :class:`BertEmbedder`, tokenising, batching, pooling;
- :mod:`~chunkeval.encoders.cache`: the embedding cache, in memory and optionally on disk.
"""
