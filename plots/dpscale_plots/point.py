"""point.py — a report point's key, as the report's `point_schema` defines it.

The key (model, mode, world size, placement, and the settings: every trainer option that changes
the measurement and the mode takes, the bucket cap and the link among them) is written by the
harness (harness/point/point.h) with the JSON Schema it follows; load.py checks every point
against that schema and this module reads the fields it names, so the plotter keeps no list of
options or defaults of its own.
"""


def setting_default(schema, key):
    """The default of option KEY in the point schema (text, as the settings hold values)."""
    return schema["properties"]["settings"]["properties"][key]["default"]


class PointKey:
    """One point's key: the report point's "point" object, read."""

    def __init__(self, obj, schema):
        self.obj = obj
        self.model, self.mode, self.k = obj["model"], obj["mode"], obj["world_size"]
        # The placement the sweep asked for (nodes x ranks per node); 0 where it asked for none.
        self.nodes = obj.get("nodes", 0)
        self.ranks_per_node = obj.get("ranks_per_node", 0)
        self.placement = f"{self.nodes}x{self.ranks_per_node}" if self.nodes else ""
        self.settings = obj["settings"]  # only the options the mode takes
        cap = self.settings.get("bucket_cap_mb")
        self.cap = None if cap is None else float(cap)
        self.link = self.settings.get("link", setting_default(schema, "link"))
        # The settings away from the schema's defaults, the cap and the link apart (a chart asks
        # for those by name): what sets this point apart from the plain run of its model and mode.
        self.off_default = sorted(k for k, v in self.settings.items()
                                  if k not in ("bucket_cap_mb", "link") and v != setting_default(schema, k))

    def setting(self, key):
        """The value of option KEY (text), or None where the point's mode does not take it."""
        return self.settings.get(key)


def key_of(report, p):
    """The key of point P (a dict of REPORT's "points")."""
    return PointKey(p["point"], report["point_schema"])
