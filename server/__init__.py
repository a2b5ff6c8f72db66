"""The race server: rooms, races and results, validated with the shared ``protocol`` engine."""
