"""Starting graphs: one graph description read by the launch files and by the pip process runner."""
