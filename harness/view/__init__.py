"""`harness view`: run folders as pages, served on 127.0.0.1 or written as a static bundle.

`site.Site` answers the page's data requests (paths such as `run/0/bench/1/rows`) from the run folders,
read-only; `server` serves it as JSON, `bundle` writes the same answers as script shards. The page itself
(static/) renders model text only as text.
"""
