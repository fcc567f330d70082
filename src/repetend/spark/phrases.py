def find_phrases(spark, data, config=None, **kw):
    raise NotImplementedError
