"""LLM agents on pyql: QueryAgent and Readi."""
