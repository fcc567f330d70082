"""Spark (local[2]) vs local engine on weblike(N): wall time, kept share, parity."""
import sys, time, resource
import numpy as np
import repetend, repetend.synth
from repetend.spark import local_session, find_phrases, find_near_duplicates
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
c = repetend.synth.weblike(n)
ids = [f"d{i:06d}" for i in range(len(c))]
t = time.perf_counter(); store = repetend.TokenStore.from_texts(c.texts, ids=ids, urls=c.urls); t_store = time.perf_counter() - t
spark = local_session("local[2]", shuffle_partitions=4); spark.sparkContext.setLogLevel("ERROR")
df = spark.createDataFrame(list(zip(ids, c.texts, c.urls)), "id string, text string, url string").repartition(4)
df.count()
pc = repetend.PhraseConfig(min_docs=5, min_len=10); nc = repetend.NearDupConfig(threshold=0.8)
find_phrases(spark, df.limit(50), pc); find_near_duplicates(spark, df.limit(50), nc)  # warm workers
rows = []
t = time.perf_counter(); lp = repetend.find_phrases(store, pc); tl = time.perf_counter() - t + t_store
t = time.perf_counter(); sp = find_phrases(spark, df, pc); ts = time.perf_counter() - t
rows.append(("phrases", tl, ts, lp.phrases.equals(sp.phrases) and lp.documents.equals(sp.documents)))
t = time.perf_counter(); ln = repetend.find_near_duplicates(store, nc); tl = time.perf_counter() - t + t_store
t = time.perf_counter(); sn = find_near_duplicates(spark, df, nc); ts = time.perf_counter() - t
rows.append(("neardup", tl, ts, np.array_equal(ln.pairs.a, sn.pairs.a) and np.array_equal(ln.clusters.cluster_id, sn.clusters.cluster_id)))
tok = store.n_tokens
print(f"weblike({n}): {len(c)} docs, {tok} tokens; local includes tokenization ({t_store:.2f} s)")
print(f"{'task':8} {'local s':>8} {'spark s':>8} {'spark/local':>11} {'spark us/token':>14} equal")
for name, a, b, eq in rows:
    print(f"{name:8} {a:8.2f} {b:8.2f} {b / a:11.1f} {b / tok * 1e6:14.2f} {eq}")
s = sp.summary["spark"]
print(f"pre-filter: kept_share {s['kept_share']:.3f}, frequent words {s['frequent_words']}, "
      f"k-grams past sketch {s['kgrams_past_sketch']}, frequent k-grams {s['frequent_kgrams']}, islands docs {s['island_documents']}")
print(f"driver peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MB")
spark.stop()
