"""The node boot shared by the blueprints whose ECS nodes aitrain boots itself (a base, not a blueprint: no SPEC)."""
