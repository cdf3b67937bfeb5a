"""CloudMonitor kinds: the alarms AIT028 asks for and the contact groups they notify."""

from __future__ import annotations

from blueprints.kinds.model import Free, Kind, ReplacingInputs, Terraform

SERVICES = ("cms",)

KINDS = (
    Kind(
        token="alicloud:cms/alarm:Alarm",
        key_properties=("metric", "project", "period", "contactGroups"),
        pricing=Free("CloudMonitor alarm rules are free (SMS and phone notifications beyond the free quota are not)"),
        terraform=Terraform.MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
    Kind(
        token="alicloud:cms/alarmContactGroup:AlarmContactGroup",
        key_properties=("alarmContactGroupName", "contacts"),
        pricing=Free("a contact group has no charge of its own"),
        terraform=Terraform.MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    ),
)
