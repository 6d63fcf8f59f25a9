#!/usr/bin/python3
"""After faults stop (the drivers killed): the counter holds every acknowledged increment."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helper_kv import check_no_lost_increment  # noqa: E402

sys.exit(check_no_lost_increment("eventually"))
