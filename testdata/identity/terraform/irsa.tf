data "aws_iam_policy_document" "velero_trust" {
  statement {
    effect  = "Allow"
    actions = ["sts:AssumeRoleWithWebIdentity"]
    principals {
      type        = "Federated"
      identifiers = ["arn:aws:iam::111122223333:oidc-provider/oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F"]
    }
    condition {
      test     = "StringEquals"
      variable = "oidc.eks.ap-northeast-2.amazonaws.com/id/5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F:sub"
      values   = ["system:serviceaccount:velero:velero"]
    }
  }
}

# This one follows whichever cluster it is applied against: nothing to change.
data "aws_iam_policy_document" "cert_manager_trust" {
  statement {
    principals {
      type        = "Federated"
      identifiers = [module.eks.oidc_provider_arn]
    }
    condition {
      test     = "StringEquals"
      variable = "${replace(data.aws_eks_cluster.prod.identity[0].oidc[0].issuer, "https://", "")}:sub"
      values   = ["system:serviceaccount:cert-manager:cert-manager"]
    }
  }
}
